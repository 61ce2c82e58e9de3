#!/usr/bin/env python3
"""Generates gpunet/models.py: a TypedDict for each JSON body the gateway answers with.

Reads the gateway's OpenAPI 3.1 document (docs/openapi.json), takes the schemas its operations
answer with (``application/json``) and what they refer to, and writes them as ``TypedDict``s:
``required`` keys plain, the others ``NotRequired``; ``anyOf``/``oneOf`` as ``Union`` (with ``None``
for a null branch); ``enum``/``const`` as ``Literal``; objects nested inline as their own classes,
named after the path to them (``Job`` → ``placement`` → ``JobPlacement``). Request bodies are left
out: the client takes dicts and spec text.

    python3 clients/python/tools/generate_models.py            # writes clients/python/gpunet/models.py
    python3 clients/python/tools/generate_models.py --check    # exits 1 when the committed file differs

A schema construct it cannot express (``allOf``, an object with both properties and
``additionalProperties``, a ``$ref`` outside the document) stops it with the construct's JSON path.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
DOCUMENT = HERE.parents[2] / "docs" / "openapi.json"
OUTPUT = HERE.parent / "gpunet" / "models.py"
REF_PREFIX = "#/components/schemas/"
SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


class UnsupportedSchema(Exception):
    """The document holds something this generator cannot write as a Python type."""


@dataclass
class TypedDictClass:
    name: str
    description: Optional[str]
    #: (key, annotation, required, description)
    fields: list[tuple[str, str, bool, Optional[str]]] = field(default_factory=list)


def pascal(text: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", text)
    return "".join(w[:1].upper() + w[1:] for w in words if w)


def one_line(text: str) -> str:
    """A description as one line of a comment or docstring (no triple quote to end it early)."""
    return " ".join(text.split()).replace('"' * 3, "'" * 3)


class Generator:
    def __init__(self, document: dict[str, Any]) -> None:
        self.schemas: dict[str, Any] = document.get("components", {}).get("schemas", {})
        self.document = document
        self.classes: dict[str, TypedDictClass] = {}
        #: Classes in the order they are written: each after the classes it uses.
        self.order: list[str] = []
        self.pending: set[str] = set()
        self.uses_literal = False

    # -- what to generate ----------------------------------------------------------------------

    def response_refs(self) -> list[tuple[str, str, str]]:
        """(operation, status, component) for each JSON response with a component schema."""
        out = []
        for path, item in sorted(self.document.get("paths", {}).items()):
            for method, op in sorted(item.items()):
                if not isinstance(op, dict) or "responses" not in op:
                    continue
                for status, response in sorted(op["responses"].items()):
                    schema = response.get("content", {}).get("application/json", {}).get("schema")
                    if isinstance(schema, dict) and "$ref" in schema:
                        where = f"paths/{path}/{method}/responses/{status}"
                        out.append((f"{method.upper()} {path}", status, self.component_of(schema["$ref"], where)))
        return out

    def component_of(self, ref: str, where: str) -> str:
        if not ref.startswith(REF_PREFIX):
            raise UnsupportedSchema(f"{where}: $ref {ref!r} points outside the document")
        name = ref[len(REF_PREFIX):]
        if name not in self.schemas:
            raise UnsupportedSchema(f"{where}: $ref {ref!r} names no schema in components")
        return name

    # -- schemas to annotations ----------------------------------------------------------------

    def component(self, name: str) -> str:
        if name in self.pending:
            # A schema that contains itself: a forward reference (the others are written first).
            return repr(name)
        if name in self.classes:
            return name
        return self.annotation(self.schemas[name], name, f"components/schemas/{name}", named=True)

    def annotation(self, schema: Any, name: str, where: str, named: bool = False) -> str:
        if schema is True or schema == {}:
            return "Any"
        if not isinstance(schema, dict):
            raise UnsupportedSchema(f"{where}: a schema must be an object")
        if "allOf" in schema:
            raise UnsupportedSchema(f"{where}: allOf is not supported")
        if "$ref" in schema:
            return self.component(self.component_of(schema["$ref"], where))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.union(schema[key], name, f"{where}/{key}")
        if "const" in schema:
            self.uses_literal = True
            return f"Literal[{schema['const']!r}]"
        if "enum" in schema:
            self.uses_literal = True
            return f"Literal[{', '.join(repr(v) for v in schema['enum'])}]"
        kind = schema.get("type")
        if isinstance(kind, list):
            parts = [self.annotation({**schema, "type": k}, name, where, named) for k in kind]
            return self.join(parts)
        if kind == "array":
            return f"list[{self.annotation(schema.get('items', {}), name + 'Item', where + '/items')}]"
        if kind == "object" or "properties" in schema:
            return self.obj(schema, name, where)
        if kind in SCALARS:
            return SCALARS[kind]
        if kind is None:
            return "Any"
        raise UnsupportedSchema(f"{where}: type {kind!r} is not supported")

    def union(self, branches: list[Any], name: str, where: str) -> str:
        objects = [b for b in branches if isinstance(b, dict) and (b.get("type") == "object" or "properties" in b)]
        parts = []
        for i, branch in enumerate(branches):
            branch_name = name
            if len(objects) > 1 and branch in objects:
                branch_name = name + self.variant(branch, i)
            parts.append(self.annotation(branch, branch_name, f"{where}/{i}"))
        return self.join(parts)

    @staticmethod
    def variant(branch: dict[str, Any], index: int) -> str:
        """A variant's name from its discriminator (``mode: const fixed`` → ``Fixed``)."""
        for prop in branch.get("properties", {}).values():
            if isinstance(prop, dict) and isinstance(prop.get("const"), str):
                return pascal(prop["const"])
        return f"Variant{index}"

    @staticmethod
    def join(parts: list[str]) -> str:
        unique = list(dict.fromkeys(parts))
        others = [p for p in unique if p != "None"]
        body = others[0] if len(others) == 1 else f"Union[{', '.join(others)}]"
        return f"Optional[{body}]" if "None" in unique else body

    def obj(self, schema: dict[str, Any], name: str, where: str) -> str:
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if not props:
            if isinstance(extra, dict) or extra is True:
                value = self.annotation(extra if isinstance(extra, dict) else {}, name + "Value", where + "/additionalProperties")
                return f"dict[str, {value}]"
            return "dict[str, Any]"
        if isinstance(extra, dict) or extra is True:
            raise UnsupportedSchema(f"{where}: an object with both properties and additionalProperties")
        if name in self.classes or name in self.pending:
            raise UnsupportedSchema(f"{where}: two schemas would both be named {name}")
        self.pending.add(name)
        about = schema.get("description")
        cls = TypedDictClass(name, one_line(about) if isinstance(about, str) else None)
        required = set(schema.get("required", []))
        for key, prop in props.items():
            annotation = self.annotation(prop, name + pascal(key), f"{where}/properties/{key}")
            description = prop.get("description") if isinstance(prop, dict) else None
            description = one_line(description) if isinstance(description, str) else None
            cls.fields.append((key, annotation, key in required, description))
        self.pending.discard(name)
        self.classes[name] = cls
        self.order.append(name)
        return name

    # -- output --------------------------------------------------------------------------------

    def render(self) -> str:
        operations = self.response_refs()
        for _, _, component in operations:
            self.component(component)
        info = self.document.get("info", {})
        # No `from __future__ import annotations`: Python 3.11's TypedDict sees NotRequired only in
        # evaluated annotations, so each class is written after the classes it uses.
        typing_names = ["Any", "NotRequired", "Optional", "TypedDict", "Union"] + (["Literal"] if self.uses_literal else [])
        out = [
            '"""The gateway\'s JSON answers as types. Generated by clients/python/tools/generate_models.py',
            f"from docs/openapi.json ({info.get('title', 'gpunet')} {info.get('version', '')}); do not edit.",
            '"""',
            "",
            f"from typing import {', '.join(sorted(typing_names))}",
            "",
            "__all__ = [",
            *[f"    {n!r}," for n in sorted(self.order) + ["OPERATIONS"]],
            "]",
        ]
        for name in self.order:
            out.extend(["", ""])
            out.extend(self.render_class(self.classes[name]))
        out.extend(["", "", "#: What each operation answers with, by status: ``OPERATIONS['GET /v1/jobs/{jobId}']['200']``."])
        out.append("OPERATIONS: dict[str, dict[str, type]] = {")
        by_op: dict[str, list[tuple[str, str]]] = {}
        for op, status, component in operations:
            by_op.setdefault(op, []).append((status, component))
        for op, entries in by_op.items():
            inner = ", ".join(f"{status!r}: {component}" for status, component in entries)
            out.append(f"    {op!r}: {{{inner}}},")
        out.append("}")
        return "\n".join(out) + "\n"

    @staticmethod
    def render_class(cls: TypedDictClass) -> list[str]:
        functional = any(not key.isidentifier() or keyword.iskeyword(key) for key, *_ in cls.fields)
        def typed(annotation: str, required: bool) -> str:
            return annotation if required else f"NotRequired[{annotation}]"
        if functional:
            lines = [f"{cls.name} = TypedDict(", f"    {cls.name!r},", "    {"]
            lines += [f"        {key!r}: {typed(a, r)}," for key, a, r, _ in cls.fields]
            return lines + ["    },", ")"]
        lines = [f"class {cls.name}(TypedDict):"]
        if cls.description:
            lines.append(f'    """{cls.description}"""')
            lines.append("")
        for key, annotation, required, description in cls.fields:
            if description:
                lines.append(f"    #: {description}")
            lines.append(f"    {key}: {typed(annotation, required)}")
        return lines


def generate(document: dict[str, Any]) -> str:
    return Generator(document).render()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--document", type=Path, default=DOCUMENT)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output file is not what the document generates")
    args = parser.parse_args(argv)
    text = generate(json.loads(args.document.read_text(encoding="utf-8")))
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run python3 clients/python/tools/generate_models.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
