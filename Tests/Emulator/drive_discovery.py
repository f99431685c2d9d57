#!/usr/bin/env python3
"""Google's own machine-readable description of Drive v2 and v3 (the discovery documents that
ship inside `google-api-python-client`), used to hold the emulator and our client to it.

    drive_discovery.py fields [--write]   compare (or rewrite) drive_fields.json, the field
                                          lists the emulator carries so that it can run on
                                          the standard library alone
    drive_discovery.py sweep LOG...       check every Drive request in emulator logs (JSON
                                          lines, see GOOGLE_EMULATOR_REQUEST_LOG in the
                                          emulator's header) against the documents

Exit codes: 0 all agree, 1 a difference or violation (one line each on stderr), 2 bad usage
or unreadable input. Needs the project's .venv (`make venv`).
"""

import json
import os
import re
import sys
import urllib.parse

import googleapiclient

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS_FILE = os.path.join(HERE, "drive_fields.json")
DOCUMENTS = os.path.join(os.path.dirname(googleapiclient.__file__), "discovery_cache", "documents")
# The resources whose `fields` the emulator checks, and what `fields` selects in each answer.
ROOTS = {"v3": ["File", "FileList", "Revision", "RevisionList", "GeneratedIds"],
         "v2": ["File", "FileList", "Revision", "RevisionList", "GeneratedIds"]}
# Paths that are not discovery methods: OAuth's endpoints, and a resumable session's URI,
# which the server hands out (its `upload_id` is Google's upload protocol, not the API's).
OAUTH_PATHS = ("/o/oauth2/v2/auth", "/token", "/revoke")


def document(version):
    with open(os.path.join(DOCUMENTS, f"drive.{version}.json")) as handle:
        return json.load(handle)


# ---------------------------------------------------------------------------------------------
# Field lists


def field_tree(doc, roots):
    """{schema: {property: None | {inline tree} | "SchemaName" | "*"}} for `roots` and every
    schema they reach: None a leaf, "*" a map (any key), a name another schema."""
    schemas, tree, pending = doc["schemas"], {}, list(roots)

    def node(prop):
        prop = prop.get("items", prop) if prop.get("type") == "array" else prop
        if "$ref" in prop:
            pending.append(prop["$ref"])
            return prop["$ref"]
        if "properties" in prop:
            return {name: node(sub) for name, sub in sorted(prop["properties"].items())}
        if prop.get("type") == "object":
            return "*"
        return None

    while pending:
        name = pending.pop()
        if name not in tree:
            tree[name] = {prop: node(sub)
                          for prop, sub in sorted(schemas[name].get("properties", {}).items())}
    return dict(sorted(tree.items()))


def expected_fields():
    return {version: field_tree(document(version), roots) for version, roots in ROOTS.items()}


def fields_command(arguments):
    expected = expected_fields()
    if arguments == ["--write"]:
        with open(FIELDS_FILE, "w") as handle:
            json.dump(expected, handle, indent=1, sort_keys=True)
            handle.write("\n")
        return 0
    if arguments:
        return usage()
    with open(FIELDS_FILE) as handle:
        carried = json.load(handle)
    differences = field_differences(carried, expected)
    for line in differences:
        print(line, file=sys.stderr)
    return 1 if differences else 0


def field_differences(carried, expected, place=""):
    """One line per property that the emulator's lists and the documents disagree on."""
    lines = []
    for key in sorted(set(carried) | set(expected)):
        where = f"{place}/{key}" if place else key
        if key not in expected:
            lines.append(f"drive_fields.json: {where} is not in the discovery documents; "
                         f"rewrite the file with `drive_discovery.py fields --write`")
        elif key not in carried:
            lines.append(f"drive_fields.json: {where} is missing; rewrite the file with "
                         f"`drive_discovery.py fields --write`")
        elif isinstance(carried[key], dict) and isinstance(expected[key], dict):
            lines += field_differences(carried[key], expected[key], where)
        elif carried[key] != expected[key]:
            lines.append(f"drive_fields.json: {where} is {carried[key]!r}, the documents say "
                         f"{expected[key]!r}; rewrite the file with `drive_discovery.py fields --write`")
    return lines


# ---------------------------------------------------------------------------------------------
# The request sweep


class Methods:
    """Every Drive method of both documents, matchable by HTTP method and path."""

    def __init__(self):
        self.methods = []
        self.trees = {}
        for version in ("v2", "v3"):
            doc = document(version)
            self.trees[version] = field_tree(doc, list(doc["schemas"]))
            service = "/" + doc["servicePath"]
            for resource in doc["resources"].values():
                for method in resource.get("methods", {}).values():
                    self.add(doc, version, method, service + method["path"], upload=False)
                    if method.get("supportsMediaUpload"):
                        # The client's own convention: every upload protocol on the simple
                        # path, told apart by uploadType.
                        path = method["mediaUpload"]["protocols"]["simple"]["path"]
                        self.add(doc, version, method, path, upload=True)

    def add(self, doc, version, method, path, upload):
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path))
        parameters = dict(doc["parameters"])
        parameters.update(method.get("parameters", {}))
        query = {name: spec for name, spec in parameters.items()
                 if spec.get("location") == "query"}
        if upload:
            protocols = method["mediaUpload"]["protocols"]
            query["uploadType"] = dict(query["uploadType"], enum=sorted(
                {"media", "multipart"} | ({"resumable"} if "resumable" in protocols else set())))
        response = method.get("response", {}).get("$ref")
        self.methods.append({"version": version, "http": method["httpMethod"],
                             "pattern": re.compile(pattern), "id": method["id"], "query": query,
                             "response": response, "upload": upload})

    def find(self, http_method, path):
        # A literal segment wins over a placeholder (files/generateIds over files/{fileId}).
        for method in sorted(self.methods, key=lambda m: m["pattern"].pattern.count("[^/]+")):
            if method["http"] == http_method and method["pattern"].fullmatch(path):
                return method
        return None


def allowed_values(spec):
    """A parameter's values: its `enum`, else the values its description lists in backticks
    after "Supported" (`spaces`, `corpora` carry them only there), else None (free)."""
    if "enum" in spec:
        return spec["enum"]
    match = re.search(r"Supported (?:values|items) (?:are|include):?(.*?)(?:\.\s|$)",
                      spec.get("description", ""), re.S)
    if match:
        return re.findall(r"`([^`]+)`", match.group(1))
    return None


def fields_violations(text, tree, schema):
    """The `fields` names that `schema` lacks (nested `a/b`, `a(b,c)` and `*`)."""
    try:
        selection = parse_field_selection(text)
    except ValueError as error:
        return [str(error)]
    bad = []

    def walk(selection, node):
        for name, sub in selection.items():
            if name == "*":
                continue
            if not isinstance(node, dict) or name not in node:
                bad.append(f"no field {name!r}")
                continue
            child = node[name]
            if sub is not None:
                if child == "*":
                    continue
                walk(sub, tree[child] if isinstance(child, str) else child)

    walk(selection, tree[schema])
    return bad


def parse_field_selection(text):
    # The emulator's parser is the one under test elsewhere; importing it keeps one grammar.
    sys.path.insert(0, HERE)
    import google_emulator
    try:
        return google_emulator.parse_fields(text)
    except google_emulator.Failure:
        raise ValueError(f"unparsable fields {text!r}")


def request_violations(entry, methods):
    """What is wrong with one logged request by the documents (empty when nothing)."""
    path, query = entry["path"], entry.get("query", {})
    if not (path.startswith("/drive/") or path.startswith("/upload/drive/")):
        return []
    if "upload_id" in query:
        return []
    method = methods.find(entry["method"], path)
    where = f"{entry['method']} {path}"
    if method is None:
        return [f"{where}: not a method of the discovery documents"]
    problems = []
    for name, value in query.items():
        spec = method["query"].get(name)
        if spec is None:
            problems.append(f"{where}: query parameter {name!r} is not declared by {method['id']}")
            continue
        values = allowed_values(spec)
        parts = value.split(",") if name == "spaces" else [value]
        for part in parts:
            if values is not None and part.strip() not in values:
                problems.append(f"{where}: {name}={part!r} is not one of {', '.join(values)}")
        if spec.get("type") == "integer" and not re.fullmatch(r"-?\d+", value):
            problems.append(f"{where}: {name}={value!r} is not an integer")
    if "fields" in query and method["response"]:
        for problem in fields_violations(query["fields"], methods.trees[method["version"]],
                                         method["response"]):
            problems.append(f"{where}: fields={query['fields']!r}: {problem}")
    return problems


def sweep_command(paths):
    if not paths:
        return usage()
    methods, problems, checked = Methods(), [], 0
    for path in paths:
        try:
            with open(path) as handle:
                entries = [json.loads(line) for line in handle if line.strip()]
        except (OSError, ValueError) as error:
            print(f"drive_discovery.py: cannot read the request log {path}: {error}; "
                  f"run the tests with GOOGLE_EMULATOR_REQUEST_LOG set", file=sys.stderr)
            return 2
        for entry in entries:
            found = request_violations(entry, methods)
            checked += entry["path"].startswith(("/drive/", "/upload/drive/"))
            problems += [p for p in found if p not in problems]
    for problem in problems:
        print(problem, file=sys.stderr)
    if checked == 0:
        print("drive_discovery.py: the request log holds no Drive request: was "
              "GOOGLE_EMULATOR_REQUEST_LOG passed to the tests?", file=sys.stderr)
        return 1
    print(f"request sweep: {checked} Drive requests checked, {len(problems)} violations")
    return 1 if problems else 0


def usage():
    print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
    return 2


def main(argv):
    if argv and argv[0] == "fields":
        return fields_command(argv[1:])
    if argv and argv[0] == "sweep":
        return sweep_command(argv[1:])
    return usage()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
