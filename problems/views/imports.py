from django.http import Http404


def import_upload(request):
    raise Http404("not built yet")


def import_detail(request, job_id):
    raise Http404("not built yet")
