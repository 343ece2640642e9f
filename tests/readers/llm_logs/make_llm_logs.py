"""Write the small LLM evaluation logs of tests/readers/llm_logs/, in each format's layout.

Run from the repository root: ``python tests/readers/llm_logs/make_llm_logs.py``. The
files copy the layout each tool writes (see docs/inputs.md for the source of each
format); the scores are made up, chosen so that the tests know every value:

* lm-evaluation-harness 0.4 ``--log_samples``: ``lm_eval/<model>/samples_<task>_<date>.jsonl``
  (arc_easy: acc and acc_norm; gsm8k: exact_match under two filters, one line per
  document and filter) beside ``results_<date>.json``;
* Inspect AI: ``inspect/<date>_gpqa-diamond_<id>.json`` logs (format version 2), one with
  Inspect's epoch ``reductions``, one without (two epochs per sample);
* HELM: ``helm/runs/v1/<run name>/{run_spec.json, per_instance_stats.json}``, with a
  perturbed instance and a ``valid`` split statistic that are not read;
* SWE-bench: ``swebench/evaluation/lite/<date>_<system>/results/results.json`` (the
  experiments repository's layout, old and new keys) and a harness report
  ``swebench/model-c.run1.json`` (schema_version 2).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATE = "2024-05-13T14-32-10.123456"
#: acc of each model on the six arc_easy documents (acc_norm: acc of the next document).
ARC = {
    "org__model-a": [1, 1, 0, 1, 1, 0],
    "org__model-b": [1, 0, 0, 1, 0, 0],
    "org__model-c": [1, 1, 1, 1, 0, 1],
}
#: gsm8k exact_match per model, document and filter.
GSM = {
    "org__model-a": {"strict-match": [1, 0, 0, 1], "flexible-extract": [1, 1, 0, 1]},
    "org__model-b": {"strict-match": [0, 0, 0, 1], "flexible-extract": [0, 1, 0, 1]},
    "org__model-c": {"strict-match": [1, 1, 0, 1], "flexible-extract": [1, 1, 1, 1]},
}
#: Inspect: the grade of each model on samples 1..5, per epoch.
INSPECT = {
    "openai/gpt-4o": [["C", "C"], ["C", "I"], ["I", "I"], ["C", "C"], ["P", "C"]],
    "anthropic/claude-3-5-sonnet": [["C", "C"], ["C", "C"], ["I", "C"], ["I", "I"], ["C", "C"]],
}
#: HELM exact_match per model on four instances.
HELM = {"openai/gpt-4-0613": [1.0, 1.0, 0.0, 1.0], "meta/llama-2-70b": [1.0, 0.0, 0.0, 0.0]}
IDS = [f"django__django-{11000 + 7 * i}" for i in range(8)]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def lm_eval() -> None:
    for model, acc in ARC.items():
        lines = []
        for doc_id, a in enumerate(acc):
            doc = {
                "id": f"Mercury_{7000 + doc_id}",
                "question": f"Question {doc_id}?",
                "choices": {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C", "D"]},
                "answerKey": "A",
            }
            sample = {
                "doc_id": doc_id,
                "doc": doc,
                "target": 0,
                "arguments": {
                    "gen_args_0": {"arg_0": f"Question: {doc['question']}\nAnswer:", "arg_1": " a"}
                },
                "resps": [[["-1.25", "False"]]],
                "filtered_resps": [["-1.25", "False"]],
                "filter": "none",
                "metrics": ["acc", "acc_norm"],
                "doc_hash": _hash(json.dumps(doc)),
                "prompt_hash": _hash(doc["question"]),
                "target_hash": _hash("0"),
                "acc": float(a),
                "acc_norm": float(acc[(doc_id + 1) % len(acc)]),
            }
            lines.append(json.dumps(sample))
        _write(HERE / "lm_eval" / model / f"samples_arc_easy_{DATE}.jsonl", "\n".join(lines) + "\n")
        lines = []
        for doc_id in range(4):
            for flt, values in GSM[model].items():
                doc = {"question": f"Natalia sold {doc_id + 2} clips?", "answer": "#### 72"}
                sample = {
                    "doc_id": doc_id,
                    "doc": doc,
                    "target": "#### 72",
                    "arguments": {
                        "gen_args_0": {"arg_0": doc["question"], "arg_1": {"until": ["Question:"]}}
                    },
                    "resps": [["The answer is 72."]],
                    "filtered_resps": ["72"],
                    "filter": flt,
                    "metrics": ["exact_match"],
                    "doc_hash": _hash(json.dumps(doc)),
                    "prompt_hash": _hash(doc["question"]),
                    "target_hash": _hash("#### 72"),
                    "exact_match": float(values[doc_id]),
                }
                lines.append(json.dumps(sample))
        _write(HERE / "lm_eval" / model / f"samples_gsm8k_{DATE}.jsonl", "\n".join(lines) + "\n")
        results = {
            "results": {"arc_easy": {"alias": "arc_easy", "acc,none": sum(acc) / len(acc)}},
            "config": {"model": "hf", "model_args": f"pretrained={model.replace('__', '/')}"},
            "model_name": model.replace("__", "/"),
            "model_name_sanitized": model,
            "lm_eval_version": "0.4.8",
        }
        _write(HERE / "lm_eval" / model / f"results_{DATE}.json", json.dumps(results, indent=2))


def _inspect_log(model: str, grades: list[list[str]], *, reductions: bool) -> dict:
    value = {"C": 1.0, "P": 0.5, "I": 0.0}
    samples = [
        {
            "id": i + 1,
            "epoch": e + 1,
            "input": f"Question {i + 1}",
            "target": "A",
            "choices": ["A", "B", "C", "D"],
            "messages": [],
            "output": {"model": model, "choices": []},
            "scores": {"choice": {"value": g, "answer": "A", "explanation": "ANSWER: A"}},
            "metadata": {},
            "store": {},
            "events": [],
            "model_usage": {},
            "attachments": {},
        }
        for i, epochs in enumerate(grades)
        for e, g in enumerate(epochs)
    ]
    log = {
        "version": 2,
        "status": "success",
        "eval": {
            "run_id": "Zq3x",
            "created": "2024-10-01T10:00:00+00:00",
            "task": "gpqa_diamond",
            "task_id": "k4Yt",
            "task_version": 0,
            "dataset": {
                "name": "gpqa_diamond",
                "samples": len(grades),
                "sample_ids": list(range(1, len(grades) + 1)),
            },
            "model": model,
            "config": {"epochs": 2, "epochs_reducer": ["mean"]},
            "packages": {"inspect_ai": "0.3.60"},
        },
        "plan": {"name": "plan", "steps": [{"solver": "multiple_choice", "params": {}}]},
        "results": {
            "total_samples": 2 * len(grades),
            "completed_samples": 2 * len(grades),
            "scores": [
                {
                    "name": "choice",
                    "scorer": "choice",
                    "reducer": "mean",
                    "params": {},
                    "metrics": {},
                }
            ],
        },
        "stats": {
            "started_at": "2024-10-01T10:00:00+00:00",
            "completed_at": "2024-10-01T10:05:00+00:00",
            "model_usage": {},
        },
        "samples": samples,
    }
    if reductions:
        log["reductions"] = [
            {
                "scorer": "choice",
                "reducer": "mean",
                "samples": [
                    {
                        "value": sum(value[g] for g in epochs) / len(epochs),
                        "answer": "A",
                        "sample_id": i + 1,
                    }
                    for i, epochs in enumerate(grades)
                ],
            }
        ]
    return log


def inspect() -> None:
    for n, (model, grades) in enumerate(INSPECT.items()):
        log = _inspect_log(model, grades, reductions=n == 0)
        name = f"2024-10-01T10-00-00+00-00_gpqa-diamond_{'AbCd' if n == 0 else 'EfGh'}.json"
        _write(HERE / "inspect" / name, json.dumps(log, indent=2))


def helm() -> None:
    for model, values in HELM.items():
        run = f"mmlu:subject=anatomy,method=multiple_choice_joint,model={model.replace('/', '_')}"
        spec = {
            "name": run,
            "scenario_spec": {
                "class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
                "args": {"subject": "anatomy"},
            },
            "adapter_spec": {
                "method": "multiple_choice_joint",
                "model": model,
                "model_deployment": model,
                "max_train_instances": 5,
            },
            "metric_specs": [
                {
                    "class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                    "args": {"names": ["exact_match"]},
                }
            ],
            "groups": ["mmlu"],
        }
        stats = []
        for i, v in enumerate(values):

            def stat(name: str, value: float, split: str = "test", **more) -> dict:
                return {
                    "name": {"name": name, "split": split, **more},
                    "count": 1,
                    "sum": value,
                    "sum_squared": value * value,
                    "min": value,
                    "max": value,
                    "mean": value,
                    "variance": 0.0,
                    "stddev": 0.0,
                }

            stats.append(
                {
                    "instance_id": f"id{140 + i}",
                    "train_trial_index": 0,
                    "stats": [
                        stat("exact_match", v),
                        stat("quasi_exact_match", v),
                        stat("num_output_tokens", 1.0),
                    ],
                }
            )
            stats.append(
                {
                    "instance_id": f"id{140 + i}",
                    "train_trial_index": 0,
                    "perturbation": {
                        "name": "robustness",
                        "robustness": True,
                        "fairness": False,
                        "computed_on": "worst",
                    },
                    "stats": [stat("exact_match", 0.0, perturbation={"name": "robustness"})],
                }
            )
        stats.append(
            {
                "instance_id": "id90",
                "train_trial_index": 0,
                "stats": [
                    {
                        "name": {"name": "exact_match", "split": "valid"},
                        "count": 1,
                        "sum": 1.0,
                        "sum_squared": 1.0,
                        "min": 1.0,
                        "max": 1.0,
                        "mean": 1.0,
                        "variance": 0.0,
                        "stddev": 0.0,
                    }
                ],
            }
        )
        folder = HERE / "helm" / "runs" / "v1" / run
        _write(folder / "run_spec.json", json.dumps(spec, indent=2))
        _write(folder / "per_instance_stats.json", json.dumps(stats, indent=2))


def swebench() -> None:
    base = HERE / "swebench" / "evaluation" / "lite"
    _write(
        base / "20240101_agent-a" / "results" / "results.json",
        json.dumps(
            {"no_generation": [IDS[7]], "no_logs": [IDS[6]], "resolved": [IDS[0], IDS[1], IDS[3]]},
            indent=2,
        ),
    )
    _write(
        base / "20240102_agent-b" / "results" / "results.json",
        json.dumps(
            {
                "no_generation": [],
                "generated": IDS,
                "with_logs": IDS,
                "install_fail": [],
                "reset_failed": [],
                "no_apply": [IDS[5]],
                "applied": IDS[:5] + IDS[6:],
                "test_errored": [],
                "test_timeout": [IDS[4]],
                "resolved": [IDS[0], IDS[2]],
            },
            indent=2,
        ),
    )
    report = {
        "total_instances": 8,
        "submitted_instances": 7,
        "completed_instances": 6,
        "resolved_instances": 4,
        "unresolved_instances": 2,
        "empty_patch_instances": 1,
        "error_instances": 0,
        "completed_ids": IDS[:6],
        "incomplete_ids": [IDS[7]],
        "empty_patch_ids": [IDS[6]],
        "submitted_ids": IDS[:7],
        "resolved_ids": [IDS[0], IDS[1], IDS[2], IDS[5]],
        "unresolved_ids": [IDS[3], IDS[4]],
        "error_ids": [],
        "schema_version": 2,
    }
    _write(HERE / "swebench" / "model-c.run1.json", json.dumps(report, indent=4))
    _write(HERE / "swebench" / "lite_ids.txt", "\n".join(IDS) + "\n")


if __name__ == "__main__":
    lm_eval()
    inspect()
    helm()
    swebench()
