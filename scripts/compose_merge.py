"""Merges Compose files as `docker compose -f a -f b config` would for this project's files, and
lets an override remove a key with a null value (Compose v2.24+ spells it `!reset`), which the
Compose v1 of CI machines cannot. Mappings merge key by key; anything else is replaced.

    python3 scripts/compose_merge.py docker-compose.yml docker-compose.ci.yml > merged.yml
"""

import sys

import yaml


def merge(base, override):
    if not isinstance(base, dict) or not isinstance(override, dict):
        return override
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge(base.get(key), value)
    return merged


def strip_extensions(document: dict) -> dict:
    # x-* blocks only hold anchors, already expanded by the YAML loader.
    return {key: value for key, value in document.items() if not str(key).startswith("x-")}


def main(paths: list[str]) -> None:
    merged: dict = {}
    for path in paths:
        with open(path) as f:
            merged = merge(merged, strip_extensions(yaml.safe_load(f)))
    # Services that depend on one the override removed lose that dependency.
    services = merged.get("services", {})
    for service in services.values():
        depends = service.get("depends_on")
        if isinstance(depends, dict):
            service["depends_on"] = {name: cond for name, cond in depends.items() if name in services}
            if not service["depends_on"]:
                del service["depends_on"]
    yaml.safe_dump(merged, sys.stdout, sort_keys=False, default_flow_style=False)


if __name__ == "__main__":
    main(sys.argv[1:])
