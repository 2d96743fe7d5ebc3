"""The README reads for a newcomer: no prose sentence longer than 35 words (issue 34: its Helion
paragraph was one sentence of 90). Code blocks, tables, headings and images are not prose;
an inline code span or a link counts as one word."""
import re

from paths import ROOT

MOST_WORDS = 35


def prose_sentences(markdown: str) -> list[str]:
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)  # code blocks
    kept = [line for line in text.splitlines() if not line.lstrip().startswith(("|", "#", "!["))]
    # a list item starts a sentence of its own
    paragraphs = re.split(r"\n\n|\n(?=\s*(?:[*-]|\d+\.) )", "\n".join(kept))
    sentences = []
    for paragraph in paragraphs:
        flat = " ".join(paragraph.split())
        flat = re.sub(r"`[^`]+`", "CODE", flat)
        flat = re.sub(r"\[([^\]]+)\]\([^)]+\)", lambda m: m.group(1).replace(" ", "_"), flat)
        for short in ("e.g.", "i.e.", "vs.", "etc."):
            flat = flat.replace(short, short.replace(".", "_"))
        sentences += [s for s in re.split(r"(?<=[.!?])\s+", flat) if s.strip()]
    return sentences


def test_readme_sentences_are_short():
    long = [f"{len(s.split())} words: {s}" for s in prose_sentences((ROOT / "README.md").read_text())
            if len(s.split()) > MOST_WORDS]
    assert not long, "\n".join(long)


def test_the_counter_sees_a_long_sentence_and_skips_code():
    text = ("A short one. " + " ".join(["word"] * 40) + ".\n\n```bash\n" + " ".join(["x"] * 50) + "\n```\n"
            "| " + " | ".join(["cell"] * 50) + " |\n")
    assert [len(s.split()) for s in prose_sentences(text)] == [3, 40]
