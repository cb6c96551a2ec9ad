"""SMTP_URL and MAIL_FROM (docs/email.md#configuring-smtp): read at start-up, a bad value a one-line
error naming the variable, the password never printed."""
import pytest

from config import ConfigError, SmtpServer, load_settings


@pytest.mark.parametrize("url, expected", [
    ("smtp://user:p%40ss@mail.example.com:587", SmtpServer("mail.example.com", 587, "starttls", "user", "p@ss")),
    ("smtp://mail.example.com", SmtpServer("mail.example.com", 587, "starttls")),
    ("smtp://relay.internal:25?starttls=0", SmtpServer("relay.internal", 25, "none")),
    ("smtps://user:pw@mail.example.com", SmtpServer("mail.example.com", 465, "tls", "user", "pw")),
])
def test_smtp_urls(url, expected):
    settings = load_settings({"SMTP_URL": url, "MAIL_FROM": "Shop <shop@example.com>"})
    assert settings.smtp == expected and settings.mail_from == "Shop <shop@example.com>"
    assert "pw" not in repr(settings.smtp) or expected.password is None


def test_without_smtp_url_mail_goes_to_the_log():
    assert load_settings({}).smtp is None


@pytest.mark.parametrize("env", [
    {"SMTP_URL": "http://mail.example.com", "MAIL_FROM": "a@example.com"},
    {"SMTP_URL": "smtp://", "MAIL_FROM": "a@example.com"},
    {"SMTP_URL": "smtp://mail.example.com:99999", "MAIL_FROM": "a@example.com"},
    {"SMTP_URL": "smtp://mail.example.com?starttls=no", "MAIL_FROM": "a@example.com"},
    {"SMTP_URL": "smtps://mail.example.com?starttls=0", "MAIL_FROM": "a@example.com"},
    {"SMTP_URL": "smtp://mail.example.com?tls=1", "MAIL_FROM": "a@example.com"},
    {"SMTP_URL": "smtp://mail.example.com"},
    {"MAIL_FROM": "not an address"},
    {"MAIL_FROM": "Shop <shop@example.com>\r\nBcc: everyone@example.com"},
    {"MAIL_TIMEOUT_SECONDS": "0"},
    {"MAIL_TIMEOUT_SECONDS": "30", "MAIL_CLAIM_SECONDS": "60"},
    {"MAIL_RETRY_SCHEDULE": "1m,5m"},
])
def test_bad_mail_settings_stop_start_up_with_one_line_naming_the_variable(env):
    with pytest.raises(ConfigError) as raised:
        load_settings(env)
    message = str(raised.value)
    named = [name for name in (*env, "MAIL_FROM") if message.startswith(f"{name}:")]    # SMTP_URL alone: MAIL_FROM
    assert named and "\n" not in message


def test_the_smtp_password_is_never_printed():
    with pytest.raises(ConfigError) as raised:
        load_settings({"SMTP_URL": "smtp://user:hunter2@mail.example.com/path", "MAIL_FROM": "a@example.com"})
    assert "hunter2" not in str(raised.value)
    settings = load_settings({"SMTP_URL": "smtp://user:hunter2@mail.example.com", "MAIL_FROM": "a@example.com"})
    assert "hunter2" not in repr(settings)
