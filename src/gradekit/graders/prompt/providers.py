"""The two wire formats a judge speaks: OpenAI chat completions and Anthropic messages.

`JudgeRequest` is what is asked, independent of the wire; `wire_body` writes it for a
provider, `read_reply` reads a provider's answer into a `Reply` (text, token logprobs when
the server sent them, token usage). Pure functions of data: no HTTP here.

Where the request goes: an OpenAI `base_url` ends with the API's version, as OpenAI's own
clients take it (`https://api.openai.com/v1`, `http://localhost:11434/v1`), and
`/chat/completions` is added. An Anthropic `base_url` is the server's root, as
`ANTHROPIC_BASE_URL` is (`https://api.anthropic.com`), and `/v1/messages` is added (a root
given with its `/v1` works too).
"""

from __future__ import annotations

import codecs
import math
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from gradekit.core.errors import JudgeReplyError

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_BASE_URLS",
    "DEFAULT_KEY_ENV",
    "JudgeRequest",
    "Provider",
    "Reply",
    "Token",
    "endpoint",
    "headers",
    "read_reply",
    "wire_body",
]

Provider = Literal["openai", "anthropic"]

DEFAULT_BASE_URLS: Final[Mapping[str, str]] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
DEFAULT_KEY_ENV: Final[Mapping[str, str]] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
BASE_URL_ENV: Final[Mapping[str, str]] = {
    "openai": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
}
ANTHROPIC_VERSION: Final = "2023-06-01"
ANTHROPIC_DEFAULT_MAX_TOKENS: Final = 1024
"""Anthropic requires `max_tokens`; a judgement with its reasoning fits in this."""
TOP_LOGPROBS: Final = 20
"""Alternatives asked for at each token when scoring by logprobs (OpenAI's maximum)."""


@attrs.frozen
class JudgeRequest:
    """One judge call as asked, whatever the wire: the cache key is made of these fields.

    `schema` is the JSON Schema of the reply, sent as structured output where the server
    takes it; `sample` tells apart the calls of `samples: N` on the same prompt.
    """

    provider: Provider
    base_url: str
    model: str
    system: str
    user: str
    temperature: float
    max_tokens: int | None
    schema: Mapping[str, Any] | None
    logprobs: bool
    sample: int = 0

    def key_material(self) -> dict[str, Any]:
        """Everything that makes this call's reply what it is (never the API key)."""
        return {
            "provider": self.provider,
            "base_url": self.base_url,
            "model": self.model,
            "system": self.system,
            "user": self.user,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "schema": None if self.schema is None else dict(self.schema),
            "logprobs": self.logprobs,
            "sample": self.sample,
        }


@attrs.frozen
class Token:
    """One token of the reply with its log probability and the `top` alternatives at its
    position, each `(token, logprob)`."""

    text: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@attrs.frozen
class Reply:
    """A judge's answer: its text, its tokens with logprobs (None when the server sent
    none), and the tokens it cost."""

    text: str
    tokens: tuple[Token, ...] | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        """The form kept in the cache."""
        tokens = None
        if self.tokens is not None:
            tokens = [[t.text, t.logprob, [list(pair) for pair in t.top]] for t in self.tokens]
        return {
            "text": self.text,
            "tokens": tokens,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        """Back from the cache's form (KeyError, TypeError or ValueError if it is not one)."""
        tokens = data["tokens"]
        return cls(
            text=str(data["text"]),
            tokens=None
            if tokens is None
            else tuple(
                Token(str(text), float(lp), tuple((str(t), float(p)) for t, p in top))
                for text, lp, top in tokens
            ),
            input_tokens=int(data["input_tokens"]),
            output_tokens=int(data["output_tokens"]),
        )


def endpoint(provider: Provider, base_url: str) -> str:
    """The URL the calls of `provider` are posted to."""
    root = base_url.rstrip("/")
    if provider == "openai":
        return f"{root}/chat/completions"
    return f"{root}/messages" if root.endswith("/v1") else f"{root}/v1/messages"


def headers(provider: Provider, key: str | None) -> dict[str, str]:
    """The request headers, with the key where the provider expects it (none when None)."""
    if provider == "openai":
        return {"authorization": f"Bearer {key}"} if key else {}
    found = {"anthropic-version": ANTHROPIC_VERSION}
    if key:
        found["x-api-key"] = key
    return found


def wire_body(request: JudgeRequest, *, structured: bool) -> dict[str, Any]:
    """The JSON body for the request's provider. `structured`: ask for the reply schema as
    structured output (OpenAI `response_format`); Anthropic is always asked in plain text."""
    if request.provider == "anthropic":
        return {
            "model": request.model,
            "system": request.system,
            "messages": [{"role": "user", "content": request.user}],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS,
        }
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "temperature": request.temperature,
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if structured and request.schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "judgement", "schema": dict(request.schema), "strict": True},
        }
    if request.logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = TOP_LOGPROBS
    return body


def read_reply(provider: Provider, data: Any, url: str) -> Reply:
    """The reply in a provider's answer; JudgeReplyError when the answer has none."""
    if not isinstance(data, Mapping):
        raise _malformed(url, "the answer is not a JSON object")
    if provider == "anthropic":
        return _anthropic(data, url)
    return _openai(data, url)


def _openai(data: Mapping[str, Any], url: str) -> Reply:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise _malformed(url, "no 'choices'")
    choice = choices[0]
    message = choice.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, Mapping) else None
        why = f"the model refused: {refusal!r}" if isinstance(refusal, str) else "no text"
        raise _malformed(url, why)
    usage = data.get("usage")
    return Reply(
        text=content,
        tokens=_openai_tokens(choice.get("logprobs")),
        input_tokens=_count(usage, "prompt_tokens"),
        output_tokens=_count(usage, "completion_tokens"),
    )


def _openai_tokens(logprobs: Any) -> tuple[Token, ...] | None:
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list) or not content:
        return None
    tokens = []
    # A token may hold part of a UTF-8 character: OpenAI then writes it as escapes
    # (`\\xe2\\x80`) and gives the real `bytes`. Decoded one token after another, each token's
    # text is what it completes, so the texts join into the reply as written.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for item in content:
        if not isinstance(item, Mapping) or not isinstance(item.get("token"), str):
            return None
        top = tuple(
            (alt["token"], _logprob(alt.get("logprob")))
            for alt in item.get("top_logprobs") or ()
            if isinstance(alt, Mapping) and isinstance(alt.get("token"), str)
        )
        raw = item.get("bytes")
        if isinstance(raw, list) and all(type(b) is int and 0 <= b < 256 for b in raw):
            text = decoder.decode(bytes(raw))
        else:
            text = decoder.decode(item["token"].encode("utf-8", errors="surrogatepass"))
        tokens.append(Token(text, _logprob(item.get("logprob")), top))
    rest = decoder.decode(b"", final=True)  # a character the last token left unfinished
    if rest:
        last = tokens[-1]
        tokens[-1] = Token(last.text + rest, last.logprob, last.top)
    return tuple(tokens)


def _anthropic(data: Mapping[str, Any], url: str) -> Reply:
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise _malformed(url, "no 'content'")
    texts = [
        block["text"]
        for block in blocks
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    if not texts:
        raise _malformed(url, "no text block in 'content'")
    usage = data.get("usage")
    return Reply(
        text="".join(texts),
        input_tokens=_count(usage, "input_tokens"),
        output_tokens=_count(usage, "output_tokens"),
    )


def _logprob(value: Any) -> float:
    """A logprob as a float; anything else (null, text) counts as impossible (-inf)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        return float(value)
    return -math.inf


def _count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _malformed(url: str, why: str) -> JudgeReplyError:
    return JudgeReplyError(
        f"the judge at {url} answered without a usable reply ({why}); check that base_url "
        "and provider match the server"
    )
