from django import forms

from webhooks.models import Event


class WebhookForm(forms.Form):
    """A new hook: the URL, the events it is told of, whether it is active. The URL's scheme and
    the events are checked again by webhooks.services (the API's path too)."""

    url = forms.CharField(
        max_length=2000, label="URL", help_text="http:// or https://; each delivery is a POST."
    )
    events = forms.MultipleChoiceField(
        choices=Event.choices, widget=forms.CheckboxSelectMultiple, label="Events"
    )
    description = forms.CharField(max_length=200, required=False, label="Description")
    active = forms.BooleanField(required=False, initial=True, label="Active")
