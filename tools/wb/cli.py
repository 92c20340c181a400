"""The command line of the workbook's tools: one argparse parser, a subcommand per tool.

Each tool module has register(subparsers), which adds its subcommand and sets `run`, the function
that takes the parsed arguments and returns the exit status. Bad usage is one line on stderr and
exit status 2, for every command.
"""
import argparse

from wb import (bench_compare, best_sweep, bench_summary, e2e, energy_aa, fill, grade, kit, markers, profile_table, report, sass_loop,
                testrun)


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its errors on one line (bad usage: one clear line and exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (--help lists the commands and options)\n")


# In the order `--help` lists them.
MODULES = (report, grade, kit, bench_summary, bench_compare, energy_aa, fill, profile_table, e2e, markers, sass_loop, best_sweep, testrun)


def build_parser():
    parser = OneLineParser(prog="python3 -m wb", description=__import__("wb").__doc__.split("\n\n")[0],
                           epilog="Run from the workbook's top folder with PYTHONPATH=tools.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in MODULES:
        module.register(sub)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)  # None: the command line
    return args.run(args)
