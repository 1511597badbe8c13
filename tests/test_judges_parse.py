"""Reply parsing and validation per judge-config.md §1 (steps 1-6), plus the scoring rule."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alienbench_data.config import judge_config
from alienbench_data.judges import FeatureLabel, ParseError, parse_reply, render_reply

DIMS = judge_config().dimension_ids


def reply(values=None, **overrides) -> dict:
    values = values or {d: False for d in DIMS}
    obj = {d: {"feature_described": f"f {d}", "is_departure": values[d], "reasoning": f"r {d}"} for d in DIMS}
    obj.update(overrides)
    return obj


def test_plain_object_parses_in_dimension_order():
    vals = {d: i % 2 == 0 for i, d in enumerate(DIMS)}
    labels = parse_reply(json.dumps(reply(vals)))
    assert list(labels) == list(DIMS)
    assert labels["symmetry"] == FeatureLabel(True, "f symmetry", "r symmetry")
    assert [lab.is_departure for lab in labels.values()] == [vals[d] for d in DIMS]


@pytest.mark.parametrize(
    "wrap",
    [
        "```json\n{}\n```",
        "```\n{}\n```",
        "  \n```json   {}```  \n",
        "Here:\n```json\n{}\n```",  # a fence at the start of a later line is removed too...
    ],
)
def test_code_fences_are_stripped(wrap):
    text = wrap.replace("{}", json.dumps(reply()))
    if text.startswith("Here:"):
        # ...but the prose before it is not JSON: the spec's steps do not remove it.
        with pytest.raises(ParseError, match="not valid JSON"):
            parse_reply(text)
    else:
        assert len(parse_reply(text)) == 10


def test_one_element_array_is_unwrapped_but_longer_arrays_are_not():
    assert len(parse_reply(json.dumps([reply()]))) == 10
    with pytest.raises(ParseError, match="must be a JSON object"):
        parse_reply(json.dumps([reply(), reply()]))
    with pytest.raises(ParseError, match="must be a JSON object"):
        parse_reply(json.dumps([]))


@pytest.mark.parametrize("value,expected", [(True, True), (False, False), (1, True), (0, False),
                                            (1.0, True), (0.0, False)])
def test_is_departure_accepts_json_booleans_and_0_1(value, expected):
    labels = parse_reply(json.dumps(reply({d: value for d in DIMS})))
    assert all(lab.is_departure is expected for lab in labels.values())


@pytest.mark.parametrize("value", ["false", "true", "0", "1", 2, -1, 0.5, None, [], {}])
def test_is_departure_rejects_strings_and_other_values(value):
    obj = reply()
    obj["habitat"]["is_departure"] = value
    with pytest.raises(ParseError, match="habitat"):
        parse_reply(json.dumps(obj))


def test_missing_dimension_is_rejected_and_named():
    obj = reply()
    del obj["cognition"]
    with pytest.raises(ParseError, match="cognition"):
        parse_reply(json.dumps(obj))


def test_missing_is_departure_key_and_non_object_value_are_rejected():
    obj = reply()
    del obj["symmetry"]["is_departure"]
    with pytest.raises(ParseError, match="no is_departure"):
        parse_reply(json.dumps(obj))
    obj = reply()
    obj["symmetry"] = True
    with pytest.raises(ParseError, match="must be an object"):
        parse_reply(json.dumps(obj))


def test_extra_keys_are_ignored_and_text_fields_may_be_absent():
    obj = reply(extra={"x": 1})
    del obj["locomotion"]["reasoning"]
    labels = parse_reply(json.dumps(obj))
    assert labels["locomotion"].reasoning is None


@pytest.mark.parametrize("text", ["", "   ", "not json", "{", '{"symmetry": ', "null", "42"])
def test_garbage_is_rejected(text):
    with pytest.raises(ParseError):
        parse_reply(text)


@given(
    values=st.fixed_dictionaries({d: st.booleans() for d in DIMS}),
    fence=st.sampled_from(["", "```", "```json"]),
    pad=st.text(alphabet=" \n\t", max_size=3),
    array=st.booleans(),
)
def test_render_then_parse_round_trips(values, fence, pad, array):
    labels = {d: FeatureLabel(values[d], f"desc {d} ≤15 “quoted”", "why") for d in DIMS}
    text = render_reply(labels)
    if array:
        text = f"[{text}]"
    if fence:
        text = f"{fence}\n{text}\n```"
    assert parse_reply(pad + text + pad) == labels


def test_ward_score_is_the_number_of_departures():
    # Scoring rule (judge-config.md §1): a dimension scores 1 if is_departure is true or 1.
    vals = {d: (1 if i < 3 else False) for i, d in enumerate(DIMS)}
    labels = parse_reply(json.dumps(reply(vals)))
    assert sum(int(lab.is_departure) for lab in labels.values()) == 3
