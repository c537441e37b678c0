from django.http import Http404


def problem_list(request):
    raise Http404("not built yet")


def problem_detail(request, external_id):
    raise Http404("not built yet")


def proof_detail(request, proof_id):
    raise Http404("not built yet")
