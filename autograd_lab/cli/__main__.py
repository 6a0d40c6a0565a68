"""``python -m autograd_lab.cli`` runs the command line, like the ``autograd-lab`` script."""

import sys

from autograd_lab.cli import main

sys.exit(main())
