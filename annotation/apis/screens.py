from rest_framework.views import APIView


class ScreenDetailApi(APIView):
    """Placeholder; replaced by the screen API."""
