"""The tool's signing keys: one signs, and every unretired key is published at /lti/jwks/.

A rotation makes a new key the signing one and keeps the key it replaces published, so a platform
that cached the key set before the rotation still verifies what was signed just before it, and one
that fetches it now finds the new key: two keys live during a rotation, never more. The next
rotation (or `--retire-previous`, once the platforms have had time to fetch the set again) retires
the older one.
"""

import json

from django.db import transaction
from django.utils import timezone
from jwcrypto.jwk import JWK

from lti.models import ToolKey

KEY_BITS = 2048


def key_generate() -> ToolKey:
    key = JWK.generate(kty="RSA", size=KEY_BITS)
    return ToolKey.objects.create(
        kid=key.thumbprint(),
        private_pem=key.export_to_pem(private_key=True, password=None).decode(),
        public_pem=key.export_to_pem().decode(),
    )


def key_signing() -> ToolKey:
    """The key that signs now; the first one is made on first use."""
    key = ToolKey.objects.filter(retired_at__isnull=True).order_by("-created_at", "-pk").first()
    if key is not None:
        return key
    with transaction.atomic():
        # Two first launches at once make one key: the second waits here and finds the first's.
        list(ToolKey.objects.select_for_update().all()[:1])
        key = ToolKey.objects.filter(retired_at__isnull=True).order_by("-created_at", "-pk").first()
        return key or key_generate()


def key_rotate(*, retire_previous: bool = False) -> ToolKey:
    """A new signing key. The key it replaces stays published unless `retire_previous`; any older
    one is retired, so at most two keys are live."""
    with transaction.atomic():
        live = list(ToolKey.objects.select_for_update().filter(retired_at__isnull=True).order_by("-created_at", "-pk"))
        new = key_generate()
        keep = set() if retire_previous else {key.pk for key in live[:1]}
        ToolKey.objects.filter(pk__in=[key.pk for key in live if key.pk not in keep]).update(retired_at=timezone.now())
    return new


def key_retire_previous() -> int:
    """End a rotation: retire every live key but the signing one. Returns how many were retired."""
    signing = key_signing()
    return ToolKey.objects.filter(retired_at__isnull=True).exclude(pk=signing.pk).update(retired_at=timezone.now())


def public_jwk(key: ToolKey) -> dict:
    jwk = json.loads(JWK.from_pem(key.public_pem.encode()).export_public())
    return {**jwk, "kid": key.kid, "alg": "RS256", "use": "sig"}


def tool_jwks() -> dict:
    """The key set a platform verifies this tool's messages with (deep linking responses, token
    requests): every live key, the signing one first."""
    key_signing()
    keys = ToolKey.objects.filter(retired_at__isnull=True).order_by("-created_at", "-pk")
    return {"keys": [public_jwk(key) for key in keys]}
