"""`python -m cep`: the same as the `cep` command."""

import sys

try:
    from cep.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python reads the command: no traceback
    sys.stderr.write("cep: interrupted\n")
    sys.exit(130)

sys.exit(main())
