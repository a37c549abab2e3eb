# SPDX-License-Identifier: GPL-2.0-only
"""What the live benches' reports share (bench-live-report.py, bench-scale-report.py)."""
import statistics

# A paced figure is the contender's own cost only while the ring refuses (almost) nothing.
REFUSED_PACED_MAX = 0.005


def spread(values, fmt):
    """The median, and the range across rounds when there is more than one."""
    m = statistics.median(values)
    if len(values) == 1:
        return fmt.format(m)
    return (fmt + " ({}–{})").format(m, fmt.format(min(values)), fmt.format(max(values)))
