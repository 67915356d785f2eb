"""A reference folder's manifest: the SHA-256 of every file it ships, checked before restore.

    python -m workflow.manifest seal reference/full    # record the folder as it is now
    python -m workflow.manifest check reference/full   # what `make restore` checks first

An export seals the folder it writes (``SHA256SUMS``, in ``sha256sum`` format, so
``cd reference/full && sha256sum -c SHA256SUMS`` checks it too). A restore copies nothing
unless every file matches its line: a table changed after the export (a value edited in a
comparison, say) would otherwise become a tree's result and change its summaries. ``seal``
is for a folder exported before manifests existed, whose files are known to be as exported
(the tracked ones: ``git status`` shows none changed).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from workflow.artifacts import ArtifactError, atomic_path

NAME = "SHA256SUMS"
# Written into the folder after the export, from its own tables (make reference runs
# python -m workflow.results_page): pages to read, which no restore copies and no rule reads.
AFTER_EXPORT = ("RESULTS.md", "replication.csv")


class ManifestError(ArtifactError):
    """A reference folder without a manifest, or whose files are not the ones it lists."""


def digests(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder`` but the manifest and the pages
    written after the export."""
    skipped = {folder / name for name in (NAME, *AFTER_EXPORT)}
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path not in skipped
    }


def seal(folder: Path, earlier: Path | None = None) -> None:
    """Write ``folder``'s manifest. ``earlier``: the folder an export replaces, whose results
    it carried over; checked against its own manifest where it has one, so that an export
    never seals an edited table into the new folder."""
    if earlier is not None and (earlier / NAME).is_file():
        check(earlier)
    lines = [f"{digest}  {path}\n" for path, digest in digests(folder).items()]
    with atomic_path(folder / NAME) as tmp:
        tmp.write_text("".join(lines))


def listed(folder: Path) -> dict[str, str]:
    manifest = folder / NAME
    if not manifest.is_file():
        raise ManifestError(
            f"{folder}: has no {NAME}, so its tables cannot be checked. If its files are as "
            f"exported (git status shows none changed), seal it: python -m workflow.manifest "
            f"seal {folder}; otherwise export it again (make reference)"
        )
    found = {}
    for number, line in enumerate(manifest.read_text().splitlines(), start=1):
        digest, _, path = line.partition("  ")
        if len(digest) != 64 or not path:
            raise ManifestError(f"{manifest}: line {number} is not '<sha256>  <path>'")
        found[path] = digest
    return found


def check(folder: Path) -> None:
    """ManifestError naming the first file of ``folder`` that is missing, changed or not
    listed in its manifest."""
    expected, found = listed(folder), digests(folder)
    fix = (
        "restore the file as exported (git checkout -- <file>, for a tracked folder) or "
        "export the folder again"
    )
    for path, digest in expected.items():
        if path not in found:
            raise ManifestError(f"{folder / path}: listed in {folder / NAME} but missing; {fix}")
        if found[path] != digest:
            raise ManifestError(
                f"{folder / path}: its SHA-256 ({found[path][:12]}...) is not the one "
                f"{folder / NAME} records ({digest[:12]}...): the file changed after the "
                f"export; {fix}"
            )
    extra = sorted(set(found) - set(expected))
    if extra:
        raise ManifestError(
            f"{folder / extra[0]}: not listed in {folder / NAME} ({len(extra)} such file(s)): "
            f"it was added after the export; remove it or export the folder again"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workflow.manifest", description=__doc__)
    parser.add_argument("command", choices=("seal", "check"))
    parser.add_argument("folders", nargs="+", type=Path, help="reference folders")
    args = parser.parse_args(argv)
    for folder in args.folders:
        if not (folder / "provenance.json").is_file():
            sys.exit(f"{folder}: not a reference folder (it has no provenance.json)")
        try:
            seal(folder) if args.command == "seal" else check(folder)
        except ManifestError as error:
            sys.exit(str(error))
        print(f"{folder}: {'sealed' if args.command == 'seal' else 'every file as listed'}")


if __name__ == "__main__":
    main()
