from django.http import HttpResponse


def catalog(request):
    return HttpResponse("EasyCompilers")
