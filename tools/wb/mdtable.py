"""wb.mdtable - the one writer of Markdown tables for the tools (report, e2e, fill, profile-table)."""


def lines(header, rows, right=()):
    """The lines of a Markdown table: a header row, the rule, a row per item of `rows` (each a
    sequence of cells, written with str()). Columns whose index is in `right` are right-aligned."""
    out = ["| " + " | ".join(str(h) for h in header) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def table(header, rows, right=()):
    """The same table as one string, without a final newline."""
    return "\n".join(lines(header, rows, right))
