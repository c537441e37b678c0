from rest_framework.views import APIView


class ImportCreateApi(APIView):
    pass


class ImportDetailApi(APIView):
    pass
