"""The Polish suite: accepted forms derived again by independent code, and checks that accept
what a Polish speaker accepts (in the layouts models use) and reject what they would not."""

from __future__ import annotations

import re

import pytest

from benchrig.checks.judge import judge
from benchrig.checks.polish import CASES, case_lines, choice_pairs, count_words
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import Verdict
from benchrig.spec import load_task
from tests.conftest import TASKS

ORDER = list(CASES)


def task(task_id: str) -> TaskSpec:
    return load_task(TASKS / f"{task_id}.md")


def verdict(task_id: str, answer: str, thinking: str = "", finish: str = "stop") -> Verdict:
    return judge(task(task_id), Transcript(answer, thinking, finish), Settings(max_tokens=512))


# ---------------------------------------------------------------- declension


def decline_adjective_noun(adjective: str, noun: str) -> dict[str, str]:
    """Singular declension of a feminine hard-stem adjective + feminine noun in -a, by the
    textbook endings (adjective: -a -ej -ej -ą -ą -ej -a; noun: -a -y/-i -e -ę -ą -e -o,
    with k/g taking -i and softening to c/dz before the dative and locative -e)."""
    a_stem, n_stem = adjective.removesuffix("a"), noun.removesuffix("a")
    velar = n_stem[-1] in "kg"
    soft = n_stem[:-1] + {"k": "c", "g": "dz"}[n_stem[-1]] if velar else n_stem
    adjective_endings = ["a", "ej", "ej", "ą", "ą", "ej", "a"]
    noun_forms = [n_stem + "a", n_stem + ("i" if velar else "y"), soft + "e", n_stem + "ę",
                  n_stem + "ą", soft + "e", n_stem + "o"]
    return {case: f"{a_stem}{ending} {form}"
            for case, ending, form in zip(ORDER, adjective_endings, noun_forms, strict=True)}


def test_the_accepted_forms_are_the_declension_of_the_phrase() -> None:
    forms = decline_adjective_noun("piękna", "książka")
    assert forms["wołacz"] == "piękna książko" and forms["celownik"] == "pięknej książce"
    cases = task("polish-declension").check["cases"]
    assert list(cases) == ORDER  # listed in the canonical order of the cases
    assert {case: cases[case][0] for case in ORDER} == forms
    assert "„piękna książka”" in task("polish-declension").body


def lines(forms: dict[str, str], template: str) -> str:
    return "\n".join(template.format(case=case.capitalize(), form=forms[case], n=i + 1)
                     for i, case in enumerate(ORDER))


FORMS = decline_adjective_noun("piękna", "książka")
WITH_HELPERS = {**FORMS, "dopełniacz": "(kogo? czego?) pięknej książki",
                "narzędnik": "(z) piękną książką", "miejscownik": "o pięknej książce",
                "wołacz": "o piękna książko!"}


@pytest.mark.parametrize("answer", [
    lines(FORMS, "{case}: {form}"),
    lines(FORMS, "{n}. **{case}**: {form}"),
    lines(FORMS, "- {case} – {form}."),
    lines(WITH_HELPERS, "{case}: {form}"),
    "| Przypadek | Forma |\n|---|---|\n" + lines(FORMS, "| {case} | {form} |"),
    "Oto odmiana:\n\n" + lines(FORMS, "{case}: {form}").upper(),
    "M.: piękna książka\nD.: pięknej książki\nC.: pięknej książce\nB.: piękną książkę\n"
    "N.: piękną książką\nMs.: pięknej książce\nW.: piękna książko",
    "\n".join(f"{english}: {FORMS[case]}" for english, case in zip(
        ["Nominative", "Genitive", "Dative", "Accusative", "Instrumental", "Locative",
         "Vocative"], ORDER, strict=True)),
])
def test_declension_accepts_every_case_in_the_layouts_models_use(answer: str) -> None:
    v = verdict("polish-declension", answer)
    assert v.result == "pass", [(d.name, d.message) for d in v.details]
    assert len(v.details) == 7


def test_declension_rejects_wrong_forms_case_by_case() -> None:
    wrong = {**FORMS, "biernik": "piękna książka", "wołacz": "piękna książka",
             "celownik": "piekna ksiazce"}  # nominative for accusative/vocative; no diacritics
    v = verdict("polish-declension", lines(wrong, "{case}: {form}"))
    assert v.result == "fail"
    failed = {d.name for d in v.details if not d.passed}
    assert failed == {"biernik", "wołacz", "celownik"}
    assert v.evidence["forms"]["biernik"] == "piękna książka"


def test_declension_needs_a_line_per_case_and_ignores_prose_and_thinking() -> None:
    missing = lines(FORMS, "{case}: {form}").replace("Wołacz: piękna książko", "")
    v = verdict("polish-declension", missing)
    assert [d.name for d in v.details if not d.passed] == ["wołacz"]
    prose = "Mianownik to piękna książka, a wołacz brzmi piękna książko."
    assert verdict("polish-declension", prose).passed == 0
    hedged = lines({**FORMS, "biernik": "piękną książkę lub piękna książka"}, "{case}: {form}")
    assert verdict("polish-declension", hedged).result == "fail"
    only_thought = verdict("polish-declension", "Nie wiem.",
                           thinking=lines(FORMS, "{case}: {form}"))
    assert only_thought.passed == 0
    corrected = lines({**FORMS, "biernik": "piękna książka"}, "{case}: {form}") + (
        "\n\nPoprawka:\nBiernik: piękną książkę")
    assert verdict("polish-declension", corrected).result == "pass"  # the last line counts


def test_case_lines_reads_english_and_polish_names_in_one_table_row() -> None:
    found = case_lines("| Dative | Celownik | pięknej książce |")
    assert found == {"celownik": "pięknej książce"}


# ---------------------------------------------------------------- idioms

MEANINGS = {  # idiom → its meaning, as a Polish speaker explains it
    "Nie mój cyrk, nie moje małpy.": "It is not my problem; it is none of my business.",
    "Wpuścić kogoś w maliny.": "To trick or mislead someone.",
    "Mieć muchy w nosie.": "To be grumpy or in a bad mood.",
    "Obiecywać gruszki na wierzbie.": "To make promises that will never be kept.",
    "Rzucać grochem o ścianę.": "To talk to someone who will not listen; to waste one's words.",
}


def test_the_answer_key_matches_the_meaning_of_each_idiom() -> None:
    spec = task("polish-idioms")
    items = dict(re.findall(r"^(\d+)\. (.+)$", spec.body, re.MULTILINE))
    options = {text: letter for letter, text in re.findall(r"^([A-F])\. (.+)$", spec.body,
                                                              re.MULTILINE)}
    key = {number: options[MEANINGS[idiom]] for number, idiom in items.items()}
    assert key == spec.check["answers"]
    assert len(options) == len(items) + 1  # one meaning is a distractor


RIGHT = "1-C, 2-A, 3-E, 4-B, 5-D"


@pytest.mark.parametrize("line", [
    RIGHT, "1C 2A 3E 4B 5D", "1: C; 2: A; 3: E; 4: B; 5: D", "(1) c, (2) a, (3) e, (4) b, (5) d",
    "**1 → C, 2 → A, 3 → E, 4 → B, 5 → D**", "5-D, 4-B, 3-E, 2-A, 1-C.",
])
def test_choices_accepts_the_pairs_however_written(line: str) -> None:
    v = verdict("polish-idioms", f"1. Nie mój cyrk… to C.\n\nFinal answer: {line}")
    assert v.result == "pass", [(d.name, d.message) for d in v.details]


def test_choices_rejects_wrong_ambiguous_and_unmarked_answers() -> None:
    wrong = verdict("polish-idioms", "Final answer: 1-C, 2-A, 3-F, 4-B, 5-D")
    assert [d.name for d in wrong.details if not d.passed] == ["item 3"]
    both = verdict("polish-idioms", "Final answer: 1-C, 2-A, 3-E, 4-B, 5-D, 3-A")
    assert [d.message for d in both.details if not d.passed] == ["answered A/E, expected E"]
    assert verdict("polish-idioms", RIGHT).result == "fail"  # no marker, no answer
    early = verdict("polish-idioms", f"Final answer: {RIGHT}\nNie, jednak:\n"
                                     "Final answer: 1-A, 2-C, 3-E, 4-B, 5-D")
    assert early.passed == 3
    echoed = verdict("polish-idioms", "Final answer: 1-X, 2-X, 3-X, 4-X, 5-X")
    assert echoed.passed == 0
    assert choice_pairs("1-C, 2: a") == {"1": {"C"}, "2": {"A"}}


# ---------------------------------------------------------------- summary

REFERENCE = ("W 2019 roku w Dobrzycach otwarto nową bibliotekę miejską, której budowa "
             "kosztowała 12 milionów złotych.")


def test_words_are_counted_as_the_prompt_states() -> None:
    assert "oddzielony spacjami" in task("polish-summary").body
    assert "od 10 do 25 słów" in task("polish-summary").body
    assert count_words(REFERENCE) == 15
    assert count_words("12-milionowa biblioteka — w Dobrzycach.") == 4  # a lone dash is none
    assert count_words("  2019   r.  ") == 2


def test_summary_passes_within_the_limit_with_every_fact() -> None:
    for answer in [REFERENCE, f"**Streszczenie:** {REFERENCE}",
                   "Biblioteka w Dobrzycach, otwarta w 2019 r., kosztowała 12 mln zł i ma "
                   "ponad 4 tys. czytelników."]:
        v = verdict("polish-summary", answer)
        assert v.result == "pass", [(d.name, d.message) for d in v.details]


def test_summary_fails_over_or_under_the_limit_or_without_a_fact() -> None:
    long = REFERENCE + " Budynek ma trzy piętra, salę kinową na 80 osób i pracownię dla seniorów."
    v = verdict("polish-summary", long)
    assert [d.name for d in v.details if not d.passed] == ["word count"]
    assert v.details[0].message == "28 words (10–25 allowed)"
    short = verdict("polish-summary", "Biblioteka w Dobrzycach: 2019, 12 mln zł.")
    assert [d.name for d in short.details if not d.passed] == ["word count"]
    no_cost = verdict("polish-summary", REFERENCE.replace("12 milionów", "dużo"))
    assert [d.name for d in no_cost.details if not d.passed] == ["fact: koszt 12 milionów"]
    english = verdict("polish-summary", "In 2019 the town of Dobrzyce opened a new library "
                                        "that cost 12 million zloty to build.")
    assert english.result == "fail"  # the facts are Polish words: an English summary fails


def test_a_response_cut_off_while_thinking_fails_every_polish_check() -> None:
    for task_id in ("polish-declension", "polish-idioms", "polish-summary"):
        v = verdict(task_id, "", thinking="Hmm…", finish="length")
        assert v.result == "fail" and v.truncated_thinking and v.passed == 0
