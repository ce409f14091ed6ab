"""The tool's key set: published at a URL that does not change, two keys during a rotation, the
new one signing; the platform verifies what the tool signs before and after a rotation."""

import jwt
from django.core.management import call_command

from lti.models import ToolKey
from lti.services.keys import key_signing


def kids(client) -> list[str]:
    answer = client.get("/lti/jwks/")
    assert answer.status_code == 200
    keys = answer.json()["keys"]
    assert all(key["kty"] == "RSA" and key["alg"] == "RS256" and key["use"] == "sig" for key in keys)
    assert all("d" not in key for key in keys)  # public halves only
    return [key["kid"] for key in keys]


def test_a_rotation_keeps_the_previous_key_published_until_the_next_one(client, db):
    first = kids(client)
    assert len(first) == 1

    call_command("lti_rotate_key")
    second = kids(client)
    assert len(second) == 2 and second[1] == first[0] and second[0] == key_signing().kid != first[0]
    call_command("lti_rotate_key")
    third = kids(client)

    assert len(third) == 2 and third[1] == second[0] and third[0] == key_signing().kid
    assert ToolKey.objects.filter(retired_at__isnull=False).count() == 1

    call_command("lti_rotate_key", "--retire-previous")
    assert kids(client) == [key_signing().kid]


def test_what_the_tool_signs_verifies_against_its_published_key_set_across_a_rotation(client, db):
    signed_before = jwt.encode(
        {"hello": 1}, key_signing().private_pem, algorithm="RS256", headers={"kid": key_signing().kid}
    )
    call_command("lti_rotate_key")
    signed_after = jwt.encode(
        {"hello": 2}, key_signing().private_pem, algorithm="RS256", headers={"kid": key_signing().kid}
    )
    keys = {key["kid"]: jwt.PyJWK(key) for key in client.get("/lti/jwks/").json()["keys"]}  # as a platform reads it

    for token in (signed_before, signed_after):
        kid = jwt.get_unverified_header(token)["kid"]
        assert jwt.decode(token, keys[kid].key, algorithms=["RS256"])["hello"] in (1, 2)


def test_the_admin_rotates_the_key(admin_client, db):
    key_signing()
    answer = admin_client.post(
        "/admin/lti/toolkey/", {"action": "rotate", "_selected_action": [ToolKey.objects.get().pk]}, follow=True
    )

    assert answer.status_code == 200
    assert ToolKey.objects.filter(retired_at__isnull=True).count() == 2
