import pytest

from ragline.errors import ConfigError
from ragline.store import is_milvus_uri, parse_store_uri


def test_plain_uri():
    uri = parse_store_uri("milvus://127.0.0.1:19530/docs")
    assert (uri.host, uri.port, uri.collection, uri.tls, uri.token) == ("127.0.0.1", 19530, "docs", False, "")
    assert uri.server == "http://127.0.0.1:19530"


def test_credentials_and_tls_never_print_the_password():
    uri = parse_store_uri("milvus+tls://alice:s%40cret@milvus.example:443/team_docs")
    assert uri.tls and uri.server == "https://milvus.example:443"
    assert uri.token == "alice:s@cret"
    assert "s@cret" not in str(uri) and "s@cret" not in repr(uri)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("milvus://host/docs", "port"),
        ("milvus://host:19530/", "collection name"),
        ("milvus://host:19530/bad-name", "collection name"),
        ("milvus://host:99999/docs", "port"),
        ("milvus://bob:pw@host:19530/docs?x=1", "query"),
    ],
)
def test_malformed_uris_say_what_is_wrong(text, names):
    with pytest.raises(ConfigError, match=names) as error:
        parse_store_uri(text)
    assert ":pw@" not in str(error.value)


def test_only_milvus_schemes_are_store_uris():
    assert is_milvus_uri("milvus://h:1/c") and is_milvus_uri("MILVUS+TLS://h:1/c")
    assert not is_milvus_uri("./index") and not is_milvus_uri("milvus")
