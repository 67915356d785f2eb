"""Tests for workflow.config (validation) and workflow.provenance (code versions)."""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import pytest
import yaml

from workflow import provenance
from workflow.config import ConfigError, logs_root, results_root, validate_config
from workflow.config import main as config_main

ROOT = Path(__file__).resolve().parent.parent


def _load(path: Path) -> dict:
    with open(path) as handle:
        return yaml.safe_load(handle)


def _deep_merge(base: dict, override: dict) -> dict:
    """Key-by-key override; lists and scalars are replaced (as the smoke config documents)."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


@pytest.fixture
def config() -> dict:
    return _load(ROOT / "config.yaml")


# --------------------------------------------------------------------------- valid configs


def test_default_config_is_valid(config) -> None:
    assert validate_config(config) is None


def test_smoke_config_is_valid(config) -> None:
    smoke = _deep_merge(config, _load(ROOT / "config" / "smoke.yaml"))
    assert smoke["training"]["checkpoints"] == [0, 25, 50, 100]
    assert smoke["training"]["extended_checkpoints"] == [150, 200]
    assert smoke["studies"]["probes"]["extra_seeds"] == {"budget": 5, "seeds": [1777]}
    assert smoke["training"]["lr"] == config["training"]["lr"]
    assert validate_config(smoke) is None


# --------------------------------------------------------------------------- invalid configs


def _set(config: dict, dotted: str, value) -> dict:
    *parents, last = dotted.split(".")
    node = config
    for part in parents:
        node = node[part]
    node[last] = value
    return config


INVALID = [
    ("training.lr", -0.1, "training.lr"),
    ("training.lr", 0, "training.lr"),
    ("model.activation", "gelu", "model.activation"),
    ("studies.main.seeds", [], "studies.main.seeds"),
    ("studies.main.seeds", [101, 202, 101], "studies.main.seeds"),
    ("statistics.common_endpoint", 123, "statistics.common_endpoint"),
    ("training.checkpoints", [0, 500, 250], "training.checkpoints"),
    ("tasks.class_split.A", [0, 1, 2, 3, 4, 5], "tasks.class_split"),
    ("training.optimizer_at_common", "keep", "training.optimizer_at_common"),
    ("training.batch_size", 12.5, "training.batch_size"),
    ("model.conv_channels", [32], "model.conv_channels"),
]


@pytest.mark.parametrize(("dotted", "value", "named"), INVALID, ids=[i[0] for i in INVALID])
def test_invalid_value_is_named(config, dotted: str, value, named: str) -> None:
    with pytest.raises(ConfigError) as error:
        validate_config(_set(config, dotted, value))
    assert re.search(rf"config key {re.escape(named)}\b", str(error.value)), str(error.value)


CROSS_KEY = [
    # Extended checkpoints continue a run: they must come after the last base checkpoint.
    ("training.extended_checkpoints", [10000, 25000], "training.extended_checkpoints"),
    ("training.extended_checkpoints", [9000], "training.extended_checkpoints"),
    ("training.extended_checkpoints", [50000, 25000], "training.extended_checkpoints"),
    ("studies.probes.endpoint", 1234, "studies.probes.endpoint"),
    ("studies.probes.tost_budget", 200, "studies.probes.tost_budget"),
    ("studies.probes.extra_seeds.budget", 75, "studies.probes.extra_seeds.budget"),
    ("studies.activation.candidates", [0.03, 0.05, 0.04], "studies.activation.candidates"),
    ("studies.activation.candidates", [0.04, 0.05], "studies.activation.candidates"),
]


@pytest.mark.parametrize(
    ("dotted", "value", "named"), CROSS_KEY, ids=[f"{c[0]}={c[1]}" for c in CROSS_KEY]
)
def test_cross_key_rule_is_named(config, dotted: str, value, named: str) -> None:
    with pytest.raises(ConfigError) as error:
        validate_config(_set(config, dotted, value))
    assert re.search(rf"config key {re.escape(named)}\b", str(error.value)), str(error.value)


VALID_EDGES = [
    ("training.extended_checkpoints", []),
    ("training.extended_checkpoints", [10001]),
    ("studies.probes.endpoint", 250),
    ("studies.probes.tost_budget", 25),
    ("studies.probes.extra_seeds.budget", 500),
    ("studies.activation.candidates", [0.05]),
]


@pytest.mark.parametrize(
    ("dotted", "value"), VALID_EDGES, ids=[f"{c[0]}={c[1]}" for c in VALID_EDGES]
)
def test_cross_key_rules_accept_edges(config, dotted: str, value) -> None:
    assert validate_config(_set(config, dotted, value)) is None


# --------------------------------------------------------------------------- non-finite numbers


def _set_at(config: dict, path: tuple, value) -> dict:
    node = config
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return config


NAN, INF = float("nan"), float("inf")
NON_FINITE = [
    (("training", "lr"), NAN, "training.lr: nan"),
    (("training", "lr"), INF, "training.lr: inf"),
    (("training", "momentum"), -INF, "training.momentum: -inf"),
    (("training", "weight_decay"), NAN, "training.weight_decay: nan"),
    (("training", "batch_size"), NAN, "training.batch_size: nan"),
    (("training", "checkpoints", 1), INF, "training.checkpoints[1]: inf"),
    (("data", "normalize", "mean"), NAN, "data.normalize.mean: nan"),
    (("data", "sources", 1, "timeout_s"), INF, "data.sources[1].timeout_s: inf"),
    (("matching", "max_accuracy_gap_pp"), INF, "matching.max_accuracy_gap_pp: inf"),
    (("statistics", "ci_level"), NAN, "statistics.ci_level: nan"),
    (("studies", "activation", "candidates", 0), NAN, "studies.activation.candidates[0]: nan"),
    (("studies", "activation", "lr"), INF, "studies.activation.lr: inf"),
    (("studies", "probes", "tost_margin_pp"), INF, "studies.probes.tost_margin_pp: inf"),
]


@pytest.mark.parametrize(
    ("path", "value", "named"), NON_FINITE, ids=[n[2].replace(": ", "=") for n in NON_FINITE]
)
def test_non_finite_number_is_refused_naming_the_key(config, path, value, named) -> None:
    with pytest.raises(ConfigError) as error:
        validate_config(_set_at(config, path, value))
    assert f"config key {named} is not a finite number" in str(error.value), str(error.value)


def test_non_finite_numbers_from_yaml_are_refused(config) -> None:
    """What `--configfile` reads: YAML's .nan and .inf (the schema's bounds let NaN through)."""
    override = yaml.safe_load("training:\n  lr: .nan\nstudies:\n  probes:\n    lr: .inf\n")
    config["training"]["lr"] = override["training"]["lr"]
    config["studies"]["probes"]["lr"] = override["studies"]["probes"]["lr"]
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    message = str(error.value)
    assert "config key training.lr: nan is not a finite number" in message
    assert "config key studies.probes.lr: inf is not a finite number" in message


def test_non_finite_check_covers_keys_the_schema_does_not_know(config) -> None:
    config["training"]["some_future_key"] = [1.0, NAN]
    with pytest.raises(ConfigError, match=r"training\.some_future_key\[1\]: nan is not a finite"):
        validate_config(config)


# --------------------------------------------------------------------------- data sizes


def _subset(config: dict, train, test) -> dict:
    config["data"]["subset"] = {"train_per_digit": train, "test_per_digit": test}
    return config


DATA_SIZES = [
    # (subset train, subset test, key, value, message)
    (None, None, "tasks.common_per_digit", 5422, "MNIST has only 5421 training images of digit 5"),
    (100, None, "tasks.common_per_digit", 101, "data.subset.train_per_digit keeps 100"),
    (None, None, "tasks.probe_per_digit", 893, "MNIST has only 892 test images of digit 5"),
    (None, 100, "tasks.probe_per_digit", 101, "data.subset.test_per_digit keeps 100"),
    (None, None, "studies.probes.budgets", [25, 50, 100, 500, 6000], "only 5421 training"),
    (400, None, "studies.probes.budgets", [25, 50, 100, 500], "train_per_digit keeps 400"),
    (None, None, "data.subset.train_per_digit", 5422, "MNIST has only 5421 training images"),
    (None, None, "data.subset.test_per_digit", 893, "MNIST has only 892 test images"),
]


@pytest.mark.parametrize(
    ("train", "test", "dotted", "value", "says"),
    DATA_SIZES,
    ids=[f"{d[2]}={d[3]},subset={d[0]}/{d[1]}" for d in DATA_SIZES],
)
def test_images_per_digit_asked_for_must_exist(config, train, test, dotted, value, says) -> None:
    _subset(config, train, test)
    config["tasks"]["common_per_digit"] = min(config["tasks"]["common_per_digit"], train or 5421)
    config["tasks"]["probe_per_digit"] = min(config["tasks"]["probe_per_digit"], test or 892)
    with pytest.raises(ConfigError) as error:
        validate_config(_set(config, dotted, value))
    message = str(error.value)
    assert re.search(rf"config key {re.escape(dotted)}: .*{re.escape(says)}", message), message


def test_probe_budget_keys_are_each_named(config) -> None:
    """Each budget key is checked against the training images, and named on its own."""
    _subset(config, 40, None)
    config["tasks"]["common_per_digit"] = 40
    probes = config["studies"]["probes"]
    probes["budgets"] = [25, 50]
    probes["extra_seeds"]["budget"] = 50
    probes["tost_budget"] = 50
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    message = str(error.value)
    for key in ("budgets", "extra_seeds.budget", "tost_budget"):
        assert (
            f"config key studies.probes.{key}: 50 training images per digit asked for, but "
            "data.subset.train_per_digit keeps 40"
        ) in message, message


DATA_SIZE_EDGES = [
    (None, None, {"tasks.common_per_digit": 5421, "tasks.probe_per_digit": 892}),
    (5421, 892, {"tasks.common_per_digit": 5421, "tasks.probe_per_digit": 892}),
    (500, 200, {"tasks.common_per_digit": 500, "tasks.probe_per_digit": 200}),
    (None, None, {"studies.probes.budgets": [25, 50, 500, 5421]}),
]


@pytest.mark.parametrize(("train", "test", "values"), DATA_SIZE_EDGES)
def test_images_per_digit_up_to_what_exists_are_accepted(config, train, test, values) -> None:
    _subset(config, train, test)
    for dotted, value in values.items():
        _set(config, dotted, value)
    assert validate_config(config) is None


@pytest.mark.parametrize("key", ["seeds", "orders"])
def test_audit_needs_runs(config, key) -> None:
    config["audit"][key] = []
    with pytest.raises(ConfigError, match=rf"config key audit\.{key}: \[\] should be non-empty"):
        validate_config(config)


@pytest.mark.parametrize("device", ["cuda:1", "mps"])
def test_devices_torch_names_are_accepted(config, device) -> None:
    """Whether the device exists is the job check_device's question, not the parser's."""
    config["training"]["device"] = device
    config["training"]["kernels"] = "torch"
    assert validate_config(config) is None


@pytest.mark.parametrize("device", ["gpu", "cuda:", "cuda:x", "CPU", "tpu"])
def test_unknown_device_names_are_refused(config, device) -> None:
    config["training"]["device"] = device
    config["training"]["kernels"] = "torch"
    with pytest.raises(ConfigError, match=r"config key training\.device"):
        validate_config(config)


def test_extended_checkpoints_message_names_the_last_base_checkpoint(config) -> None:
    config["training"]["extended_checkpoints"] = [5000]
    with pytest.raises(ConfigError, match=r"training\.extended_checkpoints.*\(10000\)"):
        validate_config(config)


def test_main_study_has_seeds_only(config) -> None:
    assert set(config["studies"]["main"]) == {"seeds"}
    config["studies"]["main"]["orders"] = ["ABC", "BAC"]
    with pytest.raises(ConfigError, match=r"studies\.main"):
        validate_config(config)


def test_extra_seeds_is_budget_and_seeds(config) -> None:
    assert set(config["studies"]["probes"]["extra_seeds"]) == {"budget", "seeds"}
    config["studies"]["probes"]["extra_seeds"] = {50: [1777, 2777]}
    with pytest.raises(ConfigError, match=r"studies\.probes\.extra_seeds"):
        validate_config(config)


def test_every_study_seed_list_rejects_duplicates(config) -> None:
    for name in ("pilot", "long", "probes", "activation", "rotated", "noise_floor"):
        if "seeds" not in config["studies"][name]:
            continue
        broken = copy.deepcopy(config)
        broken["studies"][name]["seeds"] = [101, 101]
        with pytest.raises(ConfigError, match=rf"studies\.{name}\.seeds"):
            validate_config(broken)


def test_duplicate_seeds_are_listed(config) -> None:
    config["studies"]["main"]["seeds"] = [1, 2, 2, 3, 3]
    with pytest.raises(ConfigError, match=r"studies\.main\.seeds: duplicate seeds \[2, 3\]"):
        validate_config(config)


def test_unknown_top_level_key(config) -> None:
    config["extras"] = {"anything": 1}
    with pytest.raises(ConfigError, match="extras"):
        validate_config(config)


def test_unknown_nested_key(config) -> None:
    config["training"]["learning_rate"] = 0.1
    with pytest.raises(ConfigError, match=r"training.*learning_rate"):
        validate_config(config)


def test_missing_key(config) -> None:
    del config["matching"]["min_accuracy_pct"]
    with pytest.raises(ConfigError, match="min_accuracy_pct"):
        validate_config(config)


def test_every_problem_is_reported(config) -> None:
    config["training"]["lr"] = -1
    config["model"]["activation"] = "tanh"
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    assert "training.lr" in str(error.value)
    assert "model.activation" in str(error.value)


def test_config_error_is_value_error() -> None:
    assert issubclass(ConfigError, ValueError)


def test_validation_does_not_mutate(config) -> None:
    before = copy.deepcopy(config)
    validate_config(config)
    assert config == before


# --------------------------------------------------------------------------- provenance


SCRIPTS = ROOT / "workflow" / "scripts"


def _relative(paths) -> set[str]:
    return {Path(p).resolve().relative_to(ROOT).as_posix() for p in paths}


def test_library_files_of_compare_runs() -> None:
    files = _relative(provenance.library_files(SCRIPTS / "compare_runs.py"))
    assert {
        "workflow/scripts/compare_runs.py",
        "workflow/compare.py",
        "workflow/cka.py",  # reached only transitively, through workflow.compare
        "workflow/artifacts.py",
    } <= files
    assert "workflow/train.py" not in files
    assert "workflow/model.py" not in files


def test_library_files_of_train_history() -> None:
    files = _relative(provenance.library_files(SCRIPTS / "train_history.py"))
    assert {
        "workflow/scripts/train_history.py",
        "workflow/train.py",
        "workflow/model.py",
        "workflow/tasks.py",
        "workflow/artifacts.py",
        "workflow/kernels.py",
        "workflow/kernels.c",
    } <= files
    assert "workflow/cka.py" not in files
    assert "workflow/compare.py" not in files


def test_training_probes_does_not_hash_the_statistics() -> None:
    # A change to the bootstrap or the tests must not retrain a probe.
    files = _relative(provenance.library_files(SCRIPTS / "train_probes.py"))
    assert "workflow/probes.py" in files
    assert not {"workflow/stats.py", "workflow/studies.py", "workflow/summary.py"} & files


def test_code_version_is_stable_hex() -> None:
    version = provenance.code_version(SCRIPTS / "compare_runs.py")
    assert re.fullmatch(r"[0-9a-f]{16}", version)
    assert version == provenance.code_version(SCRIPTS / "compare_runs.py")
    assert version != provenance.code_version(SCRIPTS / "train_history.py")


@pytest.fixture
def repo_copy(tmp_path, monkeypatch) -> Path:
    """A copy of the workflow package with provenance pointed at it."""
    shutil.copytree(
        ROOT / "workflow",
        tmp_path / "workflow",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    monkeypatch.setattr(provenance, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(provenance, "PACKAGE_ROOT", tmp_path / "workflow")
    provenance.library_files.cache_clear()
    yield tmp_path
    provenance.library_files.cache_clear()


def test_code_version_independent_of_checkout_location(repo_copy) -> None:
    copied = provenance.code_version(repo_copy / "workflow" / "scripts" / "compare_runs.py")
    provenance.library_files.cache_clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(provenance, "REPO_ROOT", ROOT)
        patch.setattr(provenance, "PACKAGE_ROOT", ROOT / "workflow")
        original = provenance.code_version(SCRIPTS / "compare_runs.py")
    assert copied == original


def test_code_version_follows_imported_modules(repo_copy) -> None:
    compare_runs = repo_copy / "workflow" / "scripts" / "compare_runs.py"
    train_history = repo_copy / "workflow" / "scripts" / "train_history.py"
    before = provenance.code_version(compare_runs), provenance.code_version(train_history)

    cka = repo_copy / "workflow" / "cka.py"
    cka.write_text(cka.read_text() + "\nCHANGED = 1\n")
    after_cka = provenance.code_version(compare_runs), provenance.code_version(train_history)
    assert after_cka[0] != before[0]
    assert after_cka[1] == before[1]

    train = repo_copy / "workflow" / "train.py"
    train.write_text(train.read_text() + "\nCHANGED = 1\n")
    after_train = provenance.code_version(compare_runs), provenance.code_version(train_history)
    assert after_train[0] == after_cka[0]
    assert after_train[1] != after_cka[1]

    schema = repo_copy / "workflow" / "schemas" / "config.schema.yaml"
    schema.write_text(schema.read_text() + "\n# a change to the schema\n")
    # The schema only validates; editing it must not rerun any computation.
    assert provenance.code_version(compare_runs) == after_train[0]


def test_comments_docstrings_and_layout_rerun_nothing(repo_copy) -> None:
    train_history = repo_copy / "workflow" / "scripts" / "train_history.py"
    before = provenance.code_version(train_history)
    for name in ("train.py", "model.py", "mnist.py", "artifacts.py"):
        module = repo_copy / "workflow" / name
        source = module.read_text()
        edited = source.replace('"""', '"""Reworded. ', 1) + "\n\n# a comment\n"
        module.write_text(edited.replace("\n\n\n", "\n\n\n\n", 1))
    assert provenance.code_version(train_history) == before


def test_behaviour_drops_every_docstring_and_keeps_code(tmp_path) -> None:
    def digest(text: str) -> bytes:
        path = tmp_path / "module.py"
        path.write_text(text)
        return provenance.behaviour(path)

    plain = "def f(x):\n    return x + 1\n\n\nclass C:\n    y = 2\n"
    documented = (
        '"""Module."""\n# comment\ndef f(x):\n    """Adds one."""\n    return x + 1  # why\n\n\n'
        'class C:\n    """A class."""\n\n    y = 2\n'
    )
    assert digest(documented) == digest(plain)
    assert digest(plain.replace("x + 1", "x + 2")) != digest(plain)
    assert digest('def g():\n    """Only a docstring."""\n') == digest("def g():\n    pass\n")


def test_training_does_not_hash_the_download_code(repo_copy) -> None:
    train_history = repo_copy / "workflow" / "scripts" / "train_history.py"
    files = {p.name for p in provenance.library_files(train_history)}
    assert "mnist.py" in files and "fetch.py" not in files
    prepare = repo_copy / "workflow" / "scripts" / "prepare_mnist.py"
    before = provenance.code_version(train_history), provenance.code_version(prepare)
    fetch = repo_copy / "workflow" / "fetch.py"
    fetch.write_text(fetch.read_text() + "\nTIMEOUT_S = 30\n")
    assert provenance.code_version(train_history) == before[0]
    assert provenance.code_version(prepare) != before[1]


def test_code_version_through_symlinked_checkout(tmp_path, monkeypatch) -> None:
    real = tmp_path / "real"
    shutil.copytree(
        ROOT / "workflow", real / "workflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    monkeypatch.setattr(provenance, "REPO_ROOT", link)
    monkeypatch.setattr(provenance, "PACKAGE_ROOT", link / "workflow")
    provenance.library_files.cache_clear()
    try:
        version = provenance.code_version(link / "workflow" / "scripts" / "compare_runs.py")
    finally:
        provenance.library_files.cache_clear()
    assert re.fullmatch(r"[0-9a-f]{16}", version)


# --------------------------------------------------------------------------- folders


def _default_layout_folders(config: dict) -> set[str]:
    """Every folder the rules write at the top of the default config's results/ and logs/:
    {RESULTS}/<folder>/ and {LOGS}/<folder>/, the run paths and the match views."""
    text = "\n".join(p.read_text() for p in [ROOT / "Snakefile", *(ROOT / "rules").glob("*.smk")])
    common = (ROOT / "rules" / "common.smk").read_text()
    assert 'GROUP_ID = "runs/' in common and 'RUN_ID = f"{GROUP_ID}/' in common
    studies = config["studies"]
    views = {
        "main",
        "rotated",
        "noise_floor",
        *(f"pilot_{policy}" for policy in studies["pilot"]["policies"]),
        *(f"variant_{variant}" for variant in studies["sensitivity"]["variants"]),
    }
    assert 'view="|".join(MATCH_VIEWS)' in text
    named = {"{GROUP_ID}": {"runs"}, "{RUN_ID}": {"runs"}, "{{view}}": views, "{view}": views}
    folders: set[str] = set()
    for first in re.findall(r"\{(?:RESULTS|LOGS)\}/([^/\"]+)/", text):
        folders |= named.get(first, {first})
    assert not {folder for folder in folders if "{" in folder}, folders
    return folders


def test_every_folder_of_the_default_layout_is_refused_as_a_name(config) -> None:
    """Another config of such a name would write its results/<name>/ into the default's."""
    folders = _default_layout_folders(config)
    assert {"runs", "summary", "figures", "main", "pilot_reset", "variant_raw_input"} <= folders
    for folder in sorted(folders):
        named = copy.deepcopy(config)
        named["name"] = folder
        with pytest.raises(ConfigError, match=f"config key name: '{folder}' is a folder the"):
            validate_config(named)
    # Views of policies and variants a config may add are refused too.
    config["name"] = "variant_mine"
    with pytest.raises(ConfigError, match="config key name"):
        validate_config(config)


@pytest.mark.parametrize("name", ["a;touch${IFS}/tmp/x;#", "Full", "-x", "1st", "a b", ""])
def test_a_name_that_is_no_plain_folder_name_is_refused(config, name) -> None:
    config["name"] = name
    with pytest.raises(ConfigError, match="config key name"):
        validate_config(config)


@pytest.mark.parametrize("name", ["smoke", "cuda", "full", "my-study_2"])
def test_plain_names_are_accepted(config, name) -> None:
    config["name"] = name
    assert validate_config(config) is None


def test_the_default_config_writes_to_results_and_logs_others_to_their_own(config) -> None:
    assert (results_root(config), logs_root(config)) == ("results", "logs")
    smoke = _deep_merge(config, _load(ROOT / "config" / "smoke.yaml"))
    assert (results_root(smoke), logs_root(smoke)) == ("results/smoke", "logs/smoke")


def test_folders_prints_the_validated_folders(monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    config_main(["folders"])
    assert capsys.readouterr().out.split() == ["results", "logs", "reference/full"]
    config_main(["folders", "--configfile", "config/smoke.yaml", "config/cuda.yaml"])
    assert capsys.readouterr().out.split() == ["results/cuda", "logs/cuda", "reference/cuda"]


def test_folders_prints_nothing_for_an_invalid_config(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    bad = tmp_path / "bad.yaml"
    for text, says in [
        ("name: 'a;b'\n", "config key name"),
        ("- a list\n", "holds keys and values, not a list"),
        ("name: [\n", "while parsing"),
    ]:
        bad.write_text(text)
        with pytest.raises(SystemExit, match=says) as stop:
            config_main(["folders", "--configfile", str(bad)])
        assert str(bad) in str(stop.value)
        assert capsys.readouterr().out == ""
    with pytest.raises(SystemExit, match="No such file"):
        config_main(["folders", "--configfile", str(tmp_path / "absent.yaml")])
