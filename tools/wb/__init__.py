"""wb - the workbook's Python tools, one package with one command line.

Run from the workbook's top folder as `PYTHONPATH=tools python3 -m wb COMMAND ...`; the Makefiles
and the shell scripts in tools/ do this for you. `python3 -m wb --help` lists the commands, and
`python3 -m wb COMMAND --help` the options of one. Python 3.10 or newer, standard library only;
matplotlib draws the pictures of `report` and `e2e plots` when it is installed.
"""
import argparse
import os

# The workbook's top folder: tools/wb/ lies two levels below it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")


def add_command(subparsers, name, summary, doc, nested=False):
    """Adds the subcommand NAME: `summary` in the list of commands, and in its own --help the
    module's docstring `doc` (its first paragraph, then the rest as written). With nested=True it
    gets subcommands of its own, in `cmd`; returns (parser, their subparsers) then, else the parser."""
    first, _, rest = doc.strip("\n").partition("\n\n")
    parser = subparsers.add_parser(name, help=summary, description=first, epilog=rest or None,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    if not nested:
        return parser
    return parser, parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
