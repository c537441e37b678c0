import factory
from django.contrib.auth.models import Group, User


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", "pass-word-123")

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        for name in extracted or []:
            group, _ = Group.objects.get_or_create(name=name)
            self.groups.add(group)
        if create:
            self.save()
