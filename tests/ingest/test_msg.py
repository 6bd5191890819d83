"""Real Outlook ``.msg`` files (msg-parser's public test data, ``data/msg/SOURCE.md``): header metadata, the header
table, the body and attached Outlook messages read in turn, down to an attached message's PDF."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ragline.ingest.loaders import load_file

DATA = Path(__file__).parent / "data" / "msg"
SHA256 = {
    "outer.msg": "95dcf9ab91478e7f780f731e4c0cdfe5d64c0c79827fb6bb97af3be010a3e5ef",
    "other.msg": "c36de21a05f47d68d1cedb626209964e5ed434bbadc9f7e2843280db786ba5c1",
}


def real_msg(name: str) -> Path:
    path = DATA / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[name], f"{name} differs from SOURCE.md"
    return path


def test_a_real_msg_has_subject_from_to_date_metadata_its_header_table_and_its_body() -> None:
    """Planted fault checked: ``msg_into`` reading ``message.date`` as missing drops ``date`` and the Sent row."""
    document = load_file(real_msg("other.msg"), Path("other.msg"))
    assert document.id == "other" and document.title == "投递状态通知 (Failure Notice)"
    assert document.metadata["subject"] == "投递状态通知 (Failure Notice)"
    assert document.metadata["from"] == "Mail Delivery Subsystem <mailer-daemon@tjdpf.org.cn>"
    assert document.metadata["to"] == ["<yosipnps@model.com>"]
    assert document.metadata["date"] == "2017-11-27T09:44:30+00:00"
    assert document.text.startswith(
        "# 投递状态通知 (Failure Notice)\n\n| Field | Email message |\n| --- | --- |\n"
        "| From (sender) | Mail Delivery Subsystem <mailer-daemon@tjdpf.org.cn> |\n"
        "| Sent (date) | 2017-11-27T09:44:30+00:00 |\n"
    )
    assert "I'm afraid I was not able to deliver your message to the following\nrecipient:" in document.text
    assert "The recipients is locked. (User Locked)" in document.text


def test_attached_outlook_messages_are_read_in_turn_with_their_attachments() -> None:
    """Planted fault checked: an attached Outlook item left as "(an embedded item ...: not read)" (the branch
    ``load_msg`` had before) fails every assertion on the attached message below."""
    outer = load_file(real_msg("outer.msg"), Path("outer.msg"))
    assert outer.metadata == {"subject": "outer subject", "to": ["outer@foo.bar <outer@foo.bar>"]}
    assert outer.text.endswith(
        "Outer body\n\n## Attachment: test.msg\n\n### test\n\n| Field | Email message |\n| --- | --- |\n"
        "| To (recipients) | test@foobar.com <test@foobar.com> |\n| Subject | test |\n\nbody"
    )
    bounce = load_file(real_msg("other.msg"), Path("other.msg")).text
    attached = bounce.index("## Attachment: default_attachment.eml\n\n### 回复：转发：反馈·北京 2017年12月02-03日 销售")
    assert "| From (sender) | Meredith chen <yosipnps@model.com> |" in bounce[attached:]
    pdf = bounce.index("#### Attachment: 北京 2017年12月02-03日 销售主管 确认n.pdf", attached)
    assert "(not read" not in bounce[pdf : pdf + 200] and len(bounce) - pdf > 1000  # the PDF's pages, read


@pytest.mark.parametrize("cut", [512, 20_000])
def test_a_truncated_real_msg_is_refused_by_name(tmp_path: Path, cut: int) -> None:
    """A real .msg cut short (an interrupted copy) is an ``InputError`` naming it, not a crash."""
    from ragline.errors import InputError

    path = tmp_path / "cut.msg"
    path.write_bytes(real_msg("outer.msg").read_bytes()[:cut])
    with pytest.raises(InputError, match=r"corrupt \.msg file") as caught:
        load_file(path, Path("cut.msg"))
    assert caught.value.source == str(path)
