"""wb - the workbook's Python tools, one package with one command line.

Run from the workbook's top folder as `PYTHONPATH=tools python3 -m wb COMMAND ...`; the Makefiles
and the shell scripts in tools/ do this for you. `python3 -m wb --help` lists the commands, and
`python3 -m wb COMMAND --help` the options of one. Python 3.10 or newer, standard library only;
matplotlib draws the pictures of `report` and `e2e plots` when it is installed.
"""
import os

# The workbook's top folder: tools/wb/ lies two levels below it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
