"""What every form of the site shares."""

from django import forms


class OneChoicePreselected:
    """A form mixin: a required choice that has exactly one option starts on it, so that the
    form is not refused for an empty choice that had only one answer (a verifier run's only
    endpoint, an export's only campaign). Read when the form is shown, after its __init__ has
    set the querysets. Mix it in before forms.Form."""

    def get_initial_for_field(self, field, field_name):
        value = super().get_initial_for_field(field, field_name)
        if value is not None or not field.required:
            return value
        if isinstance(field, forms.ModelChoiceField) and field.queryset is not None:
            found = list(field.queryset[:2])
            if len(found) == 1:
                field.empty_label = None
                return getattr(found[0], field.to_field_name or "pk")
        elif isinstance(field, forms.ChoiceField):
            values = [value for value, _ in field.choices if value != ""]
            if len(values) == 1:
                return values[0]
        return value
