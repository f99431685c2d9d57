#!/usr/bin/env python3
"""Checks backup files against the JSON Schemas in Schemas/ and prints one JSON line per file.

Usage: python3 Tests/schema_check.py [FILE ...]
  Without FILEs it checks Examples/*.json and Examples/invalid/*.json.
  Needs the `jsonschema` package (`make venv` installs it into .venv from Tests/requirements.txt).

Each line is {"file": ..., "valid": bool, "errors": [JSON Pointer, ...]}: the RFC 6901
pointers of the places the schema rejected. A file is checked against the schema of its
schemaVersion (1, 2, 3 or 4); any other document against version 4's, which rejects it. A file
that is not strict JSON (invalid UTF-8, a byte order mark, NaN or Infinity, a syntax error)
is reported as {"valid": false, "errors": [], "syntax": message}: the schema never sees it.
Duplicate keys are not detected here (Python keeps the last), nor is nesting depth; the
Swift test (SchemaAgreementTests) knows which rules are beyond JSON Schema.

The exit status is 0 whatever the verdicts (this script reports; the test judges), 2 when
a file cannot be opened.
"""

import json
import sys
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = {
    version: ROOT / "Schemas" / f"habit-backup-v{version}.schema.json" for version in (1, 2, 3, 4)
}


def load_validators():
    schemas = {version: json.loads(path.read_text("utf-8")) for version, path in SCHEMAS.items()}
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    # Versions 1, 2 and 4 borrow version 3's $defs by URI, so all are registered together.
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return {
        version: Draft202012Validator(schema, registry=registry)
        for version, schema in schemas.items()
    }


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def pointer(path):
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in path)


def check(path, validators):
    try:
        document = json.loads(path.read_bytes().decode("utf-8"), parse_constant=reject_constant)
    except (UnicodeDecodeError, ValueError) as error:
        return {"valid": False, "errors": [], "syntax": str(error)}
    version = document.get("schemaVersion") if isinstance(document, dict) else None
    validator = validators.get(
        version if version in (1, 2, 3) and not isinstance(version, bool) else 4
    )
    errors = sorted({pointer(error.absolute_path) for error in validator.iter_errors(document)})
    return {"valid": not errors, "errors": errors}


def display_name(path):
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def main(arguments):
    if arguments and arguments[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    files = [Path(argument) for argument in arguments] or sorted(
        [*ROOT.glob("Examples/*.json"), *ROOT.glob("Examples/invalid/*.json")]
    )
    validators = load_validators()
    for path in files:
        try:
            verdict = check(path, validators)
        except OSError as error:
            print(f"schema_check: {path}: {error.strerror}", file=sys.stderr)
            return 2
        print(json.dumps({"file": display_name(path), **verdict}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
