"""A tiny DOM of a rendered page, from the stdlib HTML parser: elements (tag, attributes, the text
inside) and the page text, for tests that look at the report's markup."""

from __future__ import annotations

from html.parser import HTMLParser


class Dom(HTMLParser):
    """Elements (tag, attrs, text inside) and the page text, from the stdlib parser."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []
        self._open: list[dict] = []
        self.text_parts: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": [], "_stack": list(self._open)}
        self.elements.append(el)
        if tag not in self.VOID:
            self._open.append(el)

    def handle_endtag(self, tag):
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i]["tag"] == tag:
                del self._open[i:]
                break

    def handle_data(self, data):
        self.text_parts.append(data)
        for el in self._open:
            el["text"].append(data)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def find(self, tag: str | None = None, **attrs) -> list[dict]:
        out = []
        for el in self.elements:
            if tag and el["tag"] != tag:
                continue
            if all(_attr_matches(el["attrs"].get(k.rstrip("_").replace("_", "-")), v) for k, v in attrs.items()):
                out.append(el)
        return out


def _attr_matches(value, wanted) -> bool:
    if value is None:
        return False
    if wanted is True:
        return True
    return wanted in value.split() if " " not in wanted else value == wanted


def inside(dom: Dom, parent: dict) -> list[dict]:
    """Elements nested in `parent`, in document order."""
    return [el for el in dom.elements if any(p is parent for p in el["_stack"])]


def el_text(el: dict) -> str:
    return "".join(el["text"])
