app_name = "rubrics"
urlpatterns: list = []
