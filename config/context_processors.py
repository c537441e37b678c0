from config.roles import Role, user_roles


def roles(request) -> dict:
    held = user_roles(request.user)
    return {"roles": {role.value: role in held for role in Role}}
