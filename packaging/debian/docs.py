#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""rl's documentation as the package ships it, finished in place in the package's tree.

The package installs README.md, docs/ and deploy/ under /usr/share/doc/rl as they are in the
source tree, where their relative links reach the whole tree. In the package:

- A link to a file the package does not ship (the benchmark archive in bench/results/, a
  source file) becomes its text followed by the file's path in rl's source tree, so that it
  names what it pointed at and dangles nowhere.
- A document over 4 KB is compressed with gzip -9n (Debian Policy 12.3), except copyright and
  what is compressed already, and every link to it names the .gz.

Both follow the links of Markdown documents, `[text](target)`, outside fenced code blocks;
tests/packaging/package_test.sh checks the result with the same reading.

usage: docs.py DOC_DIR       (the package tree's usr/share/doc/rl)
"""
import os
import re
import subprocess
import sys

# Debian Policy 12.3: files in /usr/share/doc larger than this are compressed.
MAX_UNCOMPRESSED = 4096
LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s*(```|~~~)")


def tree(root):
    """The files and the directories under root, as paths relative to it."""
    files, dirs = set(), set()
    for d, subdirs, names in os.walk(root):
        files.update(os.path.relpath(os.path.join(d, n), root) for n in names)
        dirs.update(os.path.relpath(os.path.join(d, n), root) for n in subdirs)
    return files, dirs


def relative_target(target):
    """(path, '#fragment') of a link to a file of the tree, or None for a URL or an anchor."""
    if SCHEME.match(target) or target.startswith(("#", "/")):
        return None
    path, hash_, frag = target.partition("#")
    return (path, hash_ + frag) if path else None


def outside_fences(text, rewrite):
    """text with rewrite() applied to each line outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line):
            fenced = not fenced
            out.append(line)
        else:
            out.append(line if fenced else rewrite(line))
    return "".join(out)


def names_source_file(text, path):
    """Whether the link's text is the path itself (or its directory's, for a README)."""
    plain = text.strip("`").rstrip("/")
    return bool(plain) and (path == plain or path.startswith(plain + "/"))


def finish(doc, text, files, dirs, compressed):
    """A Markdown document's text with its links pointed at what is shipped under those names."""
    base = os.path.dirname(doc)

    def link(m, line):
        image, label, target = m.groups()
        rel = relative_target(target)
        if rel is None:
            return m.group(0)
        path, frag = rel
        resolved = os.path.normpath(os.path.join(base, path))
        if resolved in compressed:
            return f"{image}[{label}]({path}.gz{frag})"
        if resolved in files or resolved in dirs:
            return m.group(0)
        # Not shipped: the text, and the file's place in the source tree (laid out as the doc
        # directory is: README.md at its top, docs/ and deploy/ below).
        source = path if resolved.startswith("..") else resolved
        if names_source_file(label, source):
            return f"`{label.strip('`')}` in rl's source tree"
        if m.start() > 0 and line[m.start() - 1] == "(":
            return f"{label}: `{source}` in rl's source tree"
        return f"{label} (`{source}` in rl's source tree)"

    return outside_fences(text, lambda line: LINK.sub(lambda m: link(m, line), line))


def main(root):
    files, dirs = tree(root)
    docs = sorted(f for f in files if f.endswith(".md"))
    original = {d: open(os.path.join(root, d), encoding="utf-8").read() for d in docs}

    def size(f, texts):
        if f in texts:
            return len(texts[f].encode("utf-8"))
        return os.path.getsize(os.path.join(root, f))

    # A link that gains ".gz" lengthens its document, which may then need compressing too:
    # repeat until the set of compressed documents stays the same.
    compressed = set()
    while True:
        texts = {d: finish(d, original[d], files, dirs, compressed) for d in docs}
        over = {f for f in files
                if size(f, texts) > MAX_UNCOMPRESSED and os.path.basename(f) != "copyright"
                and not f.endswith(".gz")}
        if over == compressed:
            break
        compressed = over

    for d in docs:
        if texts[d] != original[d]:
            with open(os.path.join(root, d), "w", encoding="utf-8") as out:
                out.write(texts[d])
    for f in sorted(compressed):
        subprocess.run(["gzip", "-9n", os.path.join(root, f)], check=True)
    print(f"docs: {len(compressed)} compressed; links rewritten in "
          f"{sum(texts[d] != original[d] for d in docs)} documents")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit(__doc__)
    main(sys.argv[1])
