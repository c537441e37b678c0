"""What every app's API shares: one page of a list, documented as paginated."""

from rest_framework.pagination import PageNumberPagination as DrfPageNumberPagination
from rest_framework.response import Response
from rest_framework.views import APIView

PAGE_SIZE_MAX = 500


class PageNumberPagination(DrfPageNumberPagination):
    """`?page=N`, 50 rows a page unless `?page_size=` asks for another number (1 to
    PAGE_SIZE_MAX; more is PAGE_SIZE_MAX, anything else the default)."""

    page_size_query_param = "page_size"
    max_page_size = PAGE_SIZE_MAX


class ListApi(APIView):
    """An APIView answering one page of a list (`?page=N`, `?page_size=`, 50 a page). Its `pagination_class`
    makes the schema document the answer as a page (count, next, previous, results)."""

    pagination_class = PageNumberPagination

    def page(self, rows, output: type, **kwargs) -> Response:
        """One page of `rows` written by the `output` serializer (`kwargs` go to it)."""
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, self.request, view=self)
        return paginator.get_paginated_response(output(page, many=True, **kwargs).data)
