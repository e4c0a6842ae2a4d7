"""z3-nvme (ZeRO-Infinity): config generation, the pre-flight before Start, and the estimate's RAM/disk split."""
from __future__ import annotations

import pytest

from studio.config.run_config import Draft, RunConfig
from studio.errors import StudioError
from tests.helpers import run_cli


@pytest.fixture
def no_libaio(monkeypatch):
    """DeepSpeed's own verdict when libaio is missing (what AsyncIOBuilder reports on a bare Debian)."""
    from deepspeed.ops.op_builder import AsyncIOBuilder
    monkeypatch.setattr(AsyncIOBuilder, "is_compatible", lambda self, verbose=False: False)


def test_config_needs_a_folder_and_the_folder_needs_the_plan():
    assert any("z3-nvme needs offload_nvme_path" in p for p in Draft(dataset="d", deepspeed="z3-nvme").validate())
    assert any("only used by deepspeed z3-nvme" in p
               for p in Draft(dataset="d", deepspeed="z3-offload", offload_nvme_path="/nvme").validate())
    assert RunConfig(dataset="d", deepspeed="z3-nvme", offload_nvme_path="/nvme").validate() == []


def test_deepspeed_config_points_both_offloads_at_the_chosen_folder(tmp_path):
    from studio.engine.nvme import with_nvme_path
    from studio.config.deepspeed import deepspeed_json as deepspeed_config
    ds = with_nvme_path(deepspeed_config("z3-nvme"), str(tmp_path / "swap"))
    zero = ds["zero_optimization"]
    assert zero["stage"] == 3
    for key in ("offload_param", "offload_optimizer"):
        assert zero[key]["device"] == "nvme" and zero[key]["nvme_path"] == str(tmp_path / "swap")
    assert ds["aio"]["block_size"] > 0
    assert deepspeed_config("z3-nvme")["zero_optimization"]["offload_param"]["nvme_path"] != str(tmp_path / "swap")


def test_preflight_names_libaio_and_the_fix(tmp_path, no_libaio):
    from studio.engine.nvme import check_nvme_ready
    with pytest.raises(StudioError) as e:
        check_nvme_ready(str(tmp_path / "swap"))
    assert e.value.code == "engine.nvme_libaio"
    assert "async_io" in e.value.message and "libaio" in e.value.message
    assert "apt-get install libaio-dev" in e.value.fix and "z3-offload" in e.value.fix


def test_preflight_names_an_unwritable_folder(tmp_path):
    from studio.engine.nvme import check_nvme_ready
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StudioError, match="cannot be written"):
        check_nvme_ready(str(blocker / "swap"))


def test_preflight_passes_where_deepspeed_can_build_async_io(tmp_path):
    from deepspeed.ops.op_builder import AsyncIOBuilder
    from studio.engine.nvme import check_nvme_ready
    if not AsyncIOBuilder().is_compatible(verbose=False):
        pytest.skip("libaio-dev is not installed on this machine (the missing case is tested above)")
    check_nvme_ready(str(tmp_path / "swap"))
    assert (tmp_path / "swap").is_dir()


def test_cli_refuses_before_any_process_starts(tmp_path, no_libaio, monkeypatch):
    """`studio train` checks before launching: exit 2, the fix, no run folder, no traceback."""
    import argparse
    from studio.cli import train
    cfg = RunConfig(dataset=str(tmp_path / "d.jsonl"), deepspeed="z3-nvme", offload_nvme_path=str(tmp_path / "swap"),
                    output_dir=str(tmp_path / "run"))
    cfg.save(tmp_path / "c.yaml")
    args = argparse.Namespace(config=str(tmp_path / "c.yaml"), overrides=[], nproc=2, resume=None, quiet=True)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    with pytest.raises(StudioError, match="libaio"):
        train.main(args)
    assert not (tmp_path / "run").exists()


def test_cli_config_error_names_the_key(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("dataset: d.jsonl\ndeepspeed: z3-nvme\n")
    r = run_cli("train", str(cfg))
    assert r.returncode == 2 and "offload_nvme_path" in r.stderr and "Traceback" not in r.stderr


def test_estimate_splits_host_ram_and_disk():
    from studio.config.deepspeed import deepspeed_plan
    from studio.memory.estimator import estimate
    from tests.helpers import plan
    full = plan("llama3-70b", finetuning_type="full", gradient_checkpointing=True)
    ram = estimate(full.replace(deepspeed="z3-offload"), 80, ram_gb=256)
    disk = estimate(full.replace(deepspeed="z3-nvme"), 80, ram_gb=256)
    assert ram.fits is False and ram.cpu_gb > 1000 and ram.disk_gb == 0  # ~1.3 TB of host RAM
    assert disk.fits is True and disk.cpu_gb < 16
    assert disk.disk_gb == pytest.approx(ram.host_breakdown["offloaded_states"], rel=1e-6)
    assert disk.gpu_gb == pytest.approx(ram.gpu_gb)
    assert "nvme_swap_buffers" in disk.host_breakdown and disk.to_dict()["disk_gb"] > 1000
    from studio.workspace import PRESETS_DIR
    assert deepspeed_plan(str(PRESETS_DIR / "deepspeed" / "ds_z3_nvme.json")) == "z3-nvme"
