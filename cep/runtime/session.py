"""The one boundary between Python and SWI-Prolog.

SWI-Prolog is one engine per process; this module starts it once, loads the
runtime library (prolog/) once, and loads each compiled rule set once into a
module named after the hash of its text (loading is idempotent, so a worker
that receives the same rules again never duplicates clauses). A batch crosses
the boundary as one string in and one string out (../shared/FACTS.md: per
event calls cost ~20 µs; per batch they cost nothing). Batches are ASCII
bytes and cross with no conversion; answers come back as UTF-8 bytes.

The engine cache lives here, in an imported module, not in the globals of a
function that Spark pickles.

A Prolog call runs with the interpreter's signal handlers waiting (Python
runs them between bytecodes): `interruptible` lets Ctrl-C and SIGTERM stop
one where it is.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import threading
from pathlib import Path

import pyarrow as pa

from cep.errors import EngineError
from cep.resources import data_dir
from cep.runtime import native
from cep.runtime.modifiers import order_ranks

PL_ATOM, PL_STRING = 2, 6
REP_ISO_LATIN_1, REP_UTF8 = 0x0, 0x00100000
CVT_ATOM, CVT_STRING, CVT_WRITEQ = 0x1, 0x2, 0x200
BUF_STACK = 0x00010000
PL_Q_NODEBUG, PL_Q_CATCH_EXCEPTION = 0x4, 0x8
PLSIG_THROW, PLSIG_SYNC = 0x2, 0x4


class _SigAction(ctypes.Structure):  # SWI-Prolog.h's pl_sigaction_t
    _fields_ = [("sa_cfunction", ctypes.c_void_p), ("sa_predicate", ctypes.c_void_p), ("sa_flags", ctypes.c_int),
                ("reserved", ctypes.c_void_p * 2)]


class Stopped(KeyboardInterrupt):
    """A Prolog call stopped by a signal (interruptible); `code` is the
    exit status a shell gives for that signal (130 Ctrl-C, 143 SIGTERM).
    The rule sets' state is then what the call had done of its batch."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.code = 128 + signum


def _quoted(path: Path) -> str:
    """A path as a quoted Prolog atom."""
    return "'%s'" % str(path).replace("\\", "\\\\").replace("'", "\\'")


def _order_rank(text, out) -> bool:
    """cep_window:cep_order_rank(+Text, -Ranks): modifiers.order_ranks
    on UTF-8 text (pyswip gives a Prolog string as its bytes)."""
    out.unify(order_ranks(text.decode("utf-8")))
    return True


class _Session:
    def __init__(self):
        os.environ.setdefault("SWIPL_ARGS", "")
        from pyswip import Prolog
        from pyswip.core import _lib

        self.prolog = Prolog()
        self.lib = _lib
        self._bind()
        self.loaded = set()
        self.lock = threading.Lock()
        self.running = 0  # the Prolog thread of a call made from Python's main thread, while it runs
        self.stopped_by = signal.SIGINT  # the signal of the last stop()
        base = data_dir("prolog")
        self._run_text("cep_boot", "user:asserta(file_search_path(cep, %s))" % _quoted(base))
        for name in ("cep_values", "cep_runtime", "cep_window", "cep_user", "cep_service"):
            self._run_text("cep_boot", f"use_module(cep({name}))")
        # a subquery's ORDER BY orders as the top level's (cep_window:cep_subquery_rows/6)
        Prolog.register_foreign(_order_rank, "cep_order_rank", arity=2, module="cep_window")
        self._load_fast()

    def _load_fast(self):
        """The C helper where make built it beside its source (loaded by
        prolog/cep_fast.pl itself), else from the per-user cache
        (cep.runtime.native), else none: the Prolog versions run."""
        if os.environ.get("CEP_NO_FOREIGN") or list(self.prolog.query("cep_fast:foreign_loaded")):
            return
        swipl = list(self.prolog.query("current_prolog_flag(version, V), current_prolog_flag(arch, A)"))[0]
        library = native.cached(f"{swipl['V']} {swipl['A']}")
        if library is not None:
            list(self.prolog.query("cep_fast:load_foreign(%s)" % _quoted(library.with_suffix(""))))

    def _bind(self):
        lib = self.lib
        lib.PL_new_term_refs.argtypes = [ctypes.c_int]
        lib.PL_new_term_refs.restype = ctypes.c_size_t
        lib.PL_put_chars.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p]
        lib.PL_put_chars.restype = ctypes.c_int
        lib.PL_get_nchars.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
                                      ctypes.POINTER(ctypes.c_char_p), ctypes.c_uint]
        lib.PL_get_nchars.restype = ctypes.c_int
        lib.PL_get_string.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                                      ctypes.POINTER(ctypes.c_size_t)]
        lib.PL_get_string.restype = ctypes.c_int
        lib.PL_predicate.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
        lib.PL_predicate.restype = ctypes.c_void_p
        lib.PL_open_query.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
        lib.PL_open_query.restype = ctypes.c_void_p
        lib.PL_next_solution.argtypes = [ctypes.c_void_p]
        lib.PL_next_solution.restype = ctypes.c_int
        lib.PL_exception.argtypes = [ctypes.c_void_p]
        lib.PL_exception.restype = ctypes.c_size_t
        lib.PL_cut_query.argtypes = [ctypes.c_void_p]
        lib.PL_open_foreign_frame.restype = ctypes.c_void_p
        lib.PL_discard_foreign_frame.argtypes = [ctypes.c_void_p]
        lib.PL_new_term_ref.restype = ctypes.c_size_t
        lib.PL_new_atom.argtypes = [ctypes.c_char_p]
        lib.PL_new_atom.restype = ctypes.c_size_t
        lib.PL_new_functor.argtypes = [ctypes.c_size_t, ctypes.c_int]
        lib.PL_new_functor.restype = ctypes.c_size_t
        lib.PL_is_functor.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
        lib.PL_get_arg.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t]
        lib.PL_get_integer.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]
        lib.PL_sigaction.argtypes = [ctypes.c_int, ctypes.POINTER(_SigAction), ctypes.POINTER(_SigAction)]
        lib.PL_thread_raise.argtypes = [ctypes.c_int, ctypes.c_int]
        # a signal of Prolog's own (no OS signal: Python keeps SIGINT and SIGTERM) that throws
        # error(signal(_, N), _) at the next call port of the thread it is raised in (stop)
        self._stop_signal = lib.PL_sigaction(0, ctypes.byref(_SigAction(None, None, PLSIG_THROW | PLSIG_SYNC)), None)
        self._signal = lib.PL_new_functor(lib.PL_new_atom(b"signal"), 2)
        self._cep_message = lib.PL_new_functor(lib.PL_new_atom(b"cep_message"), 1)
        self._error = lib.PL_new_functor(lib.PL_new_atom(b"error"), 2)
        self._resource_error = lib.PL_new_functor(lib.PL_new_atom(b"resource_error"), 1)
        self._preds = {}

    def _pred(self, name: str, arity: int, module: str):
        key = (name, arity, module)
        if key not in self._preds:
            self._preds[key] = self.lib.PL_predicate(name.encode(), arity, module.encode())
        return self._preds[key]

    def stop(self, signum: int):
        """Stop the call that runs from Python's main thread, if one does,
        with Stopped(signum) (callable from any thread; interruptible)."""
        running = self.running
        if running and self._stop_signal > 0:
            self.stopped_by = signum
            self.lib.PL_thread_raise(running, self._stop_signal)

    def _is_stop(self, exc) -> bool:
        """Whether a call's exception is stop()'s: error(signal(_, N), _)."""
        lib = self.lib
        what, number, n = lib.PL_new_term_ref(), lib.PL_new_term_ref(), ctypes.c_int()
        return bool(lib.PL_is_functor(exc, self._error) and lib.PL_get_arg(1, exc, what)
                    and lib.PL_is_functor(what, self._signal) and lib.PL_get_arg(2, what, number)
                    and lib.PL_get_integer(number, ctypes.byref(n)) and n.value == self._stop_signal)

    def _text_of(self, term) -> str:
        length = ctypes.c_size_t()
        ptr = ctypes.c_char_p()
        flags = CVT_ATOM | CVT_STRING | CVT_WRITEQ | REP_UTF8 | BUF_STACK
        if not self.lib.PL_get_nchars(term, ctypes.byref(length), ctypes.byref(ptr), flags):
            return "<unprintable>"
        return ctypes.string_at(ptr, length.value).decode("utf-8")

    def _message(self, exc) -> str | None:
        """The words of a cep_message(Text) exception (cep_runtime.pl), or
        of SWI-Prolog running out of memory (error(resource_error(What),
        _)): a value or the partial matches of a batch too large for its
        stacks, which ends the run with a clear error, not a dump of them."""
        lib = self.lib
        arg = lib.PL_new_term_ref()
        if lib.PL_is_functor(exc, self._cep_message):
            lib.PL_get_arg(1, exc, arg)
            return self._text_of(arg)
        if lib.PL_is_functor(exc, self._error):
            lib.PL_get_arg(1, exc, arg)
            if lib.PL_is_functor(arg, self._resource_error):
                what = lib.PL_new_term_ref()
                lib.PL_get_arg(1, arg, what)
                return (f"the rules ran out of memory in SWI-Prolog ({self._text_of(what)}): a value, or "
                        "the partial matches or answers of one batch, grew beyond its limits (see the "
                        "README, Limits)")
        return None

    def _latin1_of(self, term) -> bytes:
        """A Prolog string of bytes (codes 0-255) as those bytes."""
        ptr, length = ctypes.c_void_p(), ctypes.c_size_t()
        if not self.lib.PL_get_string(term, ctypes.byref(ptr), ctypes.byref(length)):
            raise EngineError("expected a string of bytes from Prolog")
        return ctypes.string_at(ptr, length.value)

    def _bytes_of(self, term) -> bytes:
        """A Prolog string as UTF-8 bytes: copied as it is when Prolog holds
        it as ISO Latin-1 text that is ASCII (no conversion at all)."""
        ptr, length = ctypes.c_void_p(), ctypes.c_size_t()
        if self.lib.PL_get_string(term, ctypes.byref(ptr), ctypes.byref(length)):
            data = ctypes.string_at(ptr, length.value)
            return data if data.isascii() else data.decode("latin-1").encode("utf-8")
        return self._text_of(term).encode("utf-8")

    def call(self, name: str, module: str, args: list, outputs: int = 1, raw: bool | str = False) -> list:
        """Call module:name(Args..., Outs...) once; Args are passed as Prolog
        strings: a str as it is, ('atom', str) as an atom, and bytes or an
        Arrow buffer as ISO Latin-1 text (ASCII: no conversion). Returns the
        outputs as str, as UTF-8 bytes when raw, as the bytes of a string
        of bytes when raw == "latin-1". A Prolog exception
        becomes an EngineError."""
        lib = self.lib
        with self.lock:
            frame = lib.PL_open_foreign_frame()
            try:
                n = len(args) + outputs
                base = lib.PL_new_term_refs(n)
                for i, arg in enumerate(args):
                    if isinstance(arg, tuple):
                        kind, data = PL_ATOM | REP_UTF8, arg[1].encode("utf-8")
                    elif isinstance(arg, str):
                        kind, data = PL_STRING | REP_UTF8, arg.encode("utf-8")
                    else:
                        kind, data = PL_STRING | REP_ISO_LATIN_1, arg
                    if isinstance(data, pa.Buffer):
                        size, data = data.size, ctypes.c_char_p(data.address)
                    else:
                        size, data = len(data), bytes(data)
                    if not lib.PL_put_chars(base + i, kind, size, data):
                        raise EngineError("cannot pass a batch to Prolog")
                qid = lib.PL_open_query(None, PL_Q_NODEBUG | PL_Q_CATCH_EXCEPTION,
                                        self._pred(name, n, module), base)
                main = threading.current_thread() is threading.main_thread()
                try:
                    self.running = lib.PL_thread_self() if main else 0
                    try:
                        ok = lib.PL_next_solution(qid)
                    finally:
                        self.running = 0
                    if not ok:
                        exc = lib.PL_exception(qid)
                        if exc and self._is_stop(exc):
                            raise Stopped(self.stopped_by)
                        if exc:
                            raise EngineError(self._message(exc) or
                                              f"Prolog error in {module}:{name}: {self._text_of(exc)}")
                        raise EngineError(f"{module}:{name} failed")
                    read = self._latin1_of if raw == "latin-1" else self._bytes_of if raw else self._text_of
                    return [read(base + len(args) + i) for i in range(outputs)]
                finally:
                    lib.PL_cut_query(qid)
            finally:
                lib.PL_discard_foreign_frame(frame)

    def _run_text(self, where: str, goal: str):
        try:
            list(self.prolog.query(goal))
        except Exception as exc:  # pyswip raises PrologError with the message
            raise EngineError(f"{where}: {goal}: {exc}") from None

    def load_rules(self, module: str, program_text: str):
        """Load a compiled rule set into `module`, once per process."""
        if module in self.loaded:
            return
        self.call("cep_load", "cep_runtime", [("atom", module), program_text], outputs=0)
        self.loaded.add(module)

    def unload_rules(self, module: str):
        """Drop a rule set load_rules loaded, with all its state
        (cep_runtime:cep_unload/1)."""
        if module in self.loaded:
            self.call("cep_unload", "cep_runtime", [("atom", module)], outputs=0)
            self.loaded.discard(module)

    def load_background(self, module: str, triples_text):
        """Load background facts (a batch text of triples), once per process."""
        if module in self.loaded:
            return
        self.call("cep_load_background", "cep_runtime", [("atom", module), triples_text], outputs=0)
        self.loaded.add(module)

    def load_instances(self, module: str, triples_text):
        """Load a background's instance triples (Background.instance_facts)
        beside its facts, once per process."""
        if (module, "i") in self.loaded:
            return
        self.call("cep_load_instances", "cep_runtime", [("atom", module), triples_text], outputs=0)
        self.loaded.add((module, "i"))

    def load_user(self, module: str, files) -> tuple[list[str], str]:
        """Load a run's user Prolog files, (source id, text) each, into
        `module` once per process (prolog/cep_user.pl). Returns the load's
        report, a text per file (error and warning lines), and the
        predicates the files define (lines Arity TAB Name)."""
        reports = []
        if self.call("cep_user_is_loaded", "cep_user", [("atom", module)])[0] != "true":
            for source, text in files:
                reports.append(self.call("cep_user_load_file", "cep_user",
                                         [("atom", module), ("atom", source), text])[0])
            if not any(line.startswith("error\t") for r in reports for line in r.splitlines()):
                self.call("cep_user_done", "cep_user", [("atom", module)], outputs=0)
        return reports, self.call("cep_user_predicates", "cep_user", [("atom", module)])[0]

    def user_loaded(self, module: str) -> bool:
        """Whether a run's user Prolog files are loaded into `module`."""
        return self.call("cep_user_is_loaded", "cep_user", [("atom", module)])[0] == "true"

    def set_limits(self, module: str, limits):
        """The limits a loaded rule set runs under (cep.limits.Limits;
        cep_runtime:cep_set_limits/2)."""
        self.call("cep_set_limits", "cep_runtime",
                  [("atom", module), f"{limits.derived} {limits.derived_value_chars} {limits.partial_matches}"],
                  outputs=0)

    def regex_gave_up(self) -> list[list[int]]:
        """The query indexes of each REGEX call that PCRE gave up on since
        the last call (cep_values:cep_regex_gave_up/1)."""
        return json.loads(self.call("cep_regex_gave_up", "cep_values", [])[0])

    def regex_problem(self, pattern: str, flags: str) -> str:
        """Why REGEX with this pattern and flags is an error on every text,
        as the runtime runs it ("flags": an unknown flag; "": it is not)."""
        return self.call("cep_regex_problem", "cep_values", [pattern, flags])[0]

    def push(self, module: str, events) -> bytes:
        """A batch (ASCII bytes or Arrow buffer, prolog/cep_fast.c) in, the
        answer lines (UTF-8 bytes, cep_runtime.pl) out."""
        return self.call("cep_push", "cep_runtime", [("atom", module), events], raw=True)[0]

    def advance(self, module: str, now_ms: int) -> bool:
        """Prune to event time now_ms; whether goals remain (cep_advance/3)."""
        return self.call("cep_advance", "cep_runtime", [("atom", module), str(now_ms)])[0] == "true"

    def static(self, module: str, time_ms: int) -> bytes:
        """The answers of the solutions of the background alone, at the
        first instant of the stream, time_ms (cep_runtime:cep_static/3)."""
        return self.call("cep_static", "cep_runtime", [("atom", module), str(time_ms)], raw=True)[0]

    def close(self, module: str, how: str, time_ms: int, counts=()) -> bytes:
        """Evaluate the windows due (cep_window:cep_close/3): `how` "begin"
        (the stream's first instant: evaluates nothing), "now"
        (event time has passed every instant before time_ms) or "final"
        (the stream ended at time_ms); `counts`: (instant, triples, events,
        events once) of the instants just processed, for count windows. The answer lines out."""
        text = " ".join([how, str(time_ms), *(str(x) for row in counts for x in row)])
        return self.call("cep_close", "cep_window", [("atom", module), text], raw=True)[0]

    def window_due(self, module: str, how: str, time_ms: int) -> int | None:
        """The first evaluation that close(how, time_ms) would make of a
        query that joins its SERVICE views at its evaluations, or None
        (cep_window:cep_window_due/3)."""
        due = self.call("cep_window_due", "cep_window", [("atom", module), f"{how} {time_ms}"])[0]
        return None if due == "none" else int(due)

    def window_skipped(self, module: str) -> list[tuple[int, int, int, int]]:
        """The runs of evaluations over empty windows cut since the last
        call (cep_window:cep_window_skipped/2): (query index, first and
        last evaluation time, count) each."""
        text = self.call("cep_window_skipped", "cep_window", [("atom", module)])[0]
        return [tuple(int(x) for x in line.split()) for line in text.splitlines()]

    def window_status(self, module: str) -> tuple[int | None, bool]:
        """(the next evaluation time of a window that can report, or None;
        whether the windows hold anything), cep_window:cep_window_status/2."""
        due, held = self.call("cep_window_status", "cep_window", [("atom", module)])[0].split()
        return (None if due == "none" else int(due)), held == "true"

    def dump(self, module: str) -> bytes:
        """The state of a loaded rule set (cep_runtime:cep_dump/2)."""
        return self.call("cep_dump", "cep_runtime", [("atom", module)], raw="latin-1")[0]

    def restore(self, module: str, state: bytes):
        self.call("cep_restore", "cep_runtime", [("atom", module), state], outputs=0)


_SESSION = None
_SESSION_LOCK = threading.Lock()


def session() -> _Session:
    """The process's Prolog session, started on first use."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None:
            _SESSION = _Session()
        return _SESSION


@contextlib.contextmanager
def interruptible(stops=lambda signum: True):
    """Within: Ctrl-C (SIGINT) and SIGTERM stop a Prolog call where it is
    (Stopped) when `stops(signum)` says so (it is asked in another thread,
    once per signal, in the order they came), as they stop Python code.
    The interpreter runs its signal handlers only once a call returns, and
    a batch can take minutes. Python writes each signal's number to its
    wakeup file, which a thread reads. From Python's main thread only
    (elsewhere nothing changes)."""
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    try:
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        reader.close()
        writer.close()
        yield
        return

    def watch():
        while numbers := reader.recv(64):
            for number in numbers:
                if number in (signal.SIGINT, signal.SIGTERM) and stops(number) and _SESSION is not None:
                    _SESSION.stop(number)

    watcher = threading.Thread(target=watch, name="cep-signals", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        writer.close()  # the watcher reads the end of its file and ends
        watcher.join()
        reader.close()
