"""Checks a JSON value against a generated model (TypedDict, Literal, Optional, list, dict): the
gateway's answers are what docs/openapi.json says, as gpunet.models types them."""

from __future__ import annotations

import types
import typing
from typing import Any


def assert_conforms(value: Any, tp: Any, path: str = "$") -> None:
    origin = typing.get_origin(tp)
    if tp is Any:
        return
    if tp is type(None):
        assert value is None, f"{path}: expected null, got {value!r}"
        return
    if origin in (typing.Union, types.UnionType):
        failures = []
        for option in typing.get_args(tp):
            try:
                assert_conforms(value, option, path)
                return
            except AssertionError as error:
                failures.append(str(error))
        raise AssertionError(f"{path}: matches none of {tp}: {'; '.join(failures)}")
    if origin is typing.Literal:
        assert value in typing.get_args(tp), f"{path}: {value!r} is not one of {typing.get_args(tp)}"
        return
    if origin is list:
        assert isinstance(value, list), f"{path}: expected a list, got {type(value).__name__}"
        for i, item in enumerate(value):
            assert_conforms(item, typing.get_args(tp)[0], f"{path}[{i}]")
        return
    if origin is dict:
        assert isinstance(value, dict), f"{path}: expected an object, got {type(value).__name__}"
        for key, item in value.items():
            assert_conforms(item, typing.get_args(tp)[1], f"{path}.{key}")
        return
    if typing.is_typeddict(tp):
        assert isinstance(value, dict), f"{path}: expected an object ({tp.__name__}), got {type(value).__name__}"
        hints = typing.get_type_hints(tp)
        missing = tp.__required_keys__ - value.keys()
        assert not missing, f"{path}: {tp.__name__} lacks {sorted(missing)}"
        unknown = value.keys() - hints.keys()
        assert not unknown, f"{path}: {tp.__name__} has no {sorted(unknown)} (the document does not say so)"
        for key, item in value.items():
            assert_conforms(item, hints[key], f"{path}.{key}")
        return
    if tp is float:
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{path}: expected a number, got {value!r}"
        return
    if tp in (int, str, bool):
        assert isinstance(value, tp) and not (tp is int and isinstance(value, bool)), f"{path}: expected {tp.__name__}, got {value!r}"
        return
    raise AssertionError(f"{path}: cannot check against {tp}")
