"""`python3 -m wb COMMAND ...` (with tools/ on PYTHONPATH): see wb/cli.py."""
import sys

from wb.cli import main

sys.exit(main())
