"""The secret denylist's one compiled matcher (``FilePolicy.denied``) decides exactly as
pathspec's gitignore rules over the same patterns, for files and directories at any depth."""

from __future__ import annotations

import itertools

import pathspec

from kairox.core.config import DEFAULT_READ_FILE_DENY
from kairox.retrieval.file_policy import FilePolicy

NAMES = [
    *("a", "src", "main.py", ".env", ".env.local", "x.env", ".envrc", ".git", ".ssh", ".aws"),
    *(".docker", "config.json", "k.pem", "pem", "x.key", "id_rsa", "id_rsa.pub", "my_id_rsa"),
    *("credentials", "credentials.json", "topsecret.txt", "secret", "s.tfstate", ".netrc"),
]


def _paths() -> set[str]:
    out = set()
    for depth in (1, 2, 3):
        for parts in itertools.product(NAMES, repeat=depth):
            out.add("/".join(parts))
    return out


def test_the_denylist_matcher_decides_as_gitignore_rules() -> None:
    for deny in (DEFAULT_READ_FILE_DENY, ("/.docker/config.json", "keys/", "*.pem", "build")):
        policy = FilePolicy(deny=deny)
        spec = pathspec.GitIgnoreSpec.from_lines([p.lower() for p in deny])
        for path in _paths():
            assert policy.denied(path, parents=False) == spec.match_file(path), path
            as_dir = policy.denied(path, is_dir=True, parents=False)
            assert as_dir == spec.match_file(path + "/"), path + "/"
