"""`python -m cep`: the same as the `cep` command."""

import sys

from cep.cli import main

sys.exit(main())
