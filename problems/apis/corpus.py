from rest_framework.views import APIView


class ProblemListApi(APIView):
    pass


class ProblemDetailApi(APIView):
    pass


class ProofListApi(APIView):
    pass


class ProofDetailApi(APIView):
    pass
