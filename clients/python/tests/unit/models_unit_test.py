import json
import sys
import typing
import unittest
from pathlib import Path

from gpunet import models

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))
import generate_models  # noqa: E402


def doc(schemas: dict, response: str = "Thing") -> dict:
    return {
        "info": {"title": "t", "version": "1"},
        "paths": {"/things": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{response}"}}}}}}}},
        "components": {"schemas": schemas},
    }


def load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace


class CommittedModelsTest(unittest.TestCase):
    def test_models_py_is_what_docs_openapi_json_generates(self) -> None:
        document = json.loads(generate_models.DOCUMENT.read_text(encoding="utf-8"))
        self.assertEqual(
            generate_models.OUTPUT.read_text(encoding="utf-8"),
            generate_models.generate(document),
            "gpunet/models.py is stale: run python3 clients/python/tools/generate_models.py",
        )

    def test_the_job_as_the_gateway_documents_it(self) -> None:
        hints = typing.get_type_hints(models.Job)
        self.assertIn("jobId", models.Job.__required_keys__)
        self.assertEqual(typing.get_args(hints["status"])[0:2], ("submitted", "funded"))
        self.assertIs(hints["cost"], models.JobCost)
        self.assertEqual(hints["cancelRequestedAt"], typing.Optional[str])
        self.assertIs(models.OPERATIONS["GET /v1/jobs/{jobId}"]["200"], models.Job)
        self.assertIs(models.OPERATIONS["GET /v1/jobs/{jobId}/statement"]["200"], models.JobStatement)


class GeneratorTest(unittest.TestCase):
    def test_required_optional_nullable_enum_and_nested(self) -> None:
        thing = {
            "type": "object",
            "description": "A thing.",
            "properties": {
                "id": {"type": "string", "description": "its id"},
                "size": {"type": ["integer", "null"]},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "owner": {"anyOf": [{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
                "prices": {"type": "object", "additionalProperties": {"type": "string"}},
                "other": {"$ref": "#/components/schemas/Other"},
            },
            "required": ["id", "size", "kind", "owner"],
        }
        source = generate_models.generate(doc({"Thing": thing, "Other": {"type": "object", "properties": {"x": {"type": "boolean"}}}}))
        self.assertIn('class Thing(TypedDict):\n    """A thing."""\n\n    #: its id\n    id: str\n', source)
        ns = load(source)
        Thing = ns["Thing"]
        self.assertEqual(Thing.__required_keys__, frozenset({"id", "size", "kind", "owner"}))
        self.assertEqual(Thing.__optional_keys__, frozenset({"tags", "prices", "other"}))
        hints = typing.get_type_hints(Thing)
        self.assertEqual(hints["size"], typing.Optional[int])
        self.assertEqual(hints["kind"], typing.Literal["a", "b"])
        self.assertEqual(hints["owner"], typing.Optional[ns["ThingOwner"]])
        self.assertEqual(hints["tags"], list[ns["ThingTagsItem"]])
        self.assertEqual(hints["prices"], dict[str, str])
        self.assertIs(hints["other"], ns["Other"])
        self.assertEqual(ns["OPERATIONS"], {"GET /things": {"200": Thing}})

    def test_variants_are_named_by_their_discriminator(self) -> None:
        pricing = {"oneOf": [
            {"type": "object", "properties": {"mode": {"const": "fixed"}}},
            {"type": "object", "properties": {"mode": {"const": "auction"}}},
        ]}
        ns = load(generate_models.generate(doc({"Thing": {"type": "object", "properties": {"pricing": pricing}}})))
        self.assertEqual(typing.get_type_hints(ns["Thing"])["pricing"], typing.Union[ns["ThingPricingFixed"], ns["ThingPricingAuction"]])

    def test_keys_that_are_no_identifiers_use_the_functional_form(self) -> None:
        ns = load(generate_models.generate(doc({"Thing": {"type": "object", "properties": {"from": {"type": "string"}, "a-b": {"type": "integer"}}}})))
        self.assertEqual(typing.get_type_hints(ns["Thing"]), {"from": str, "a-b": int})
        self.assertEqual(ns["Thing"].__optional_keys__, frozenset({"from", "a-b"}))

    def test_what_it_cannot_express_stops_it_naming_the_place(self) -> None:
        cases = [
            ({"Thing": {"type": "object", "properties": {"spec": {"$ref": "https://gpunet.io/schemas/ensemble-spec/v1.json"}}}}, "components/schemas/Thing/properties/spec: $ref 'https://gpunet.io/schemas/ensemble-spec/v1.json' points outside the document"),
            ({"Thing": {"allOf": [{"type": "object"}]}}, "components/schemas/Thing: allOf is not supported"),
            ({"Thing": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}}, "components/schemas/Thing: an object with both properties and additionalProperties"),
            ({}, "paths//things/get/responses/200: $ref '#/components/schemas/Thing' names no schema in components"),
        ]
        for schemas, message in cases:
            with self.subTest(message):
                with self.assertRaises(generate_models.UnsupportedSchema) as caught:
                    generate_models.generate(doc(schemas))
                self.assertEqual(str(caught.exception), message)

    def test_request_bodies_are_left_out(self) -> None:
        document = doc({"Thing": {"type": "object", "properties": {"a": {"type": "string"}}}, "Spec": {"$ref": "https://example.test/spec.json"}})
        self.assertNotIn("Spec", load(generate_models.generate(document)))


if __name__ == "__main__":
    unittest.main()
