"""RunConfig's values that are not fields (translation notices, derived values) belong to one config each."""
from __future__ import annotations

from studio.config.run_config import Draft


def test_notices_and_derived_values_are_never_shared_between_configs():
    a, b = Draft(), Draft()
    assert a.notices is not b.notices and a.derived is not b.derived
    a.notices.append("lora_target: note for a only")
    a.derived["learning_rate"] = "why"
    assert b.notices == [] and b.derived == {} and Draft().notices == []
    a.notices = ["replaced"]
    assert a.notices == ["replaced"] and b.notices == []
    assert a == b  # not fields: equality and the saved YAML never see them
