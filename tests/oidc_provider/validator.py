from oauth2_provider.oauth2_validators import OAuth2Validator


class Validator(OAuth2Validator):
    """The claims a lab's provider gives: user name, address, names, and the groups."""

    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "profile"}

    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.username,
            "email": user.email,
            "given_name": user.first_name,
            "family_name": user.last_name,
            "groups": sorted(user.groups.values_list("name", flat=True)),
        }
