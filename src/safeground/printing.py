"""Printable documents: a Django template rendered to PDF by WeasyPrint.

Every printed document (the match briefing, the post-match report, a case bundle's summary) is an
HTML template first, so the page a person reads and the PDF they print say the same thing. The
renderer fetches nothing from the network: text in these documents comes from users, and a
document must print the same offline in a control room as anywhere else. Only the project's own
static files are loaded (print CSS, images); any other address is refused.
"""

import mimetypes
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.text import slugify

# Documents are rendered against this made-up origin, so `{% static %}` paths resolve under it and
# nothing else does.
_ORIGIN = "https://safeground.invalid/"


def _static_only_fetcher() -> Any:
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    class StaticOnly(URLFetcher):
        """The project's static files and `data:` URLs (inline images); nothing else."""

        def fetch(self, url: str, headers: Any = None) -> URLFetcherResponse:
            if url.startswith("data:"):
                return super().fetch(url, headers)
            static = _ORIGIN + settings.STATIC_URL.lstrip("/")
            path = finders.find(url.removeprefix(static)) if url.startswith(static) else None
            if not isinstance(path, str):
                raise ValueError(f"printed documents load only the project's static files: {url}")
            kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
            with open(path, "rb") as f:
                return URLFetcherResponse(url, f.read(), headers={"Content-Type": kind})

    return StaticOnly(allowed_protocols=("https", "data"))


def render_pdf(
    template_name: str, context: dict[str, Any], request: HttpRequest | None = None
) -> bytes:
    """The template as PDF bytes. Templates link their CSS as `{% static %}` paths, which print."""
    from weasyprint import HTML  # imported here: WeasyPrint loads Pango, pages do not need it

    html = render_to_string(template_name, {**context, "printing": True}, request=request)
    return HTML(string=html, base_url=_ORIGIN, url_fetcher=_static_only_fetcher()).write_pdf()


def pdf_response(
    template_name: str, context: dict[str, Any], filename: str, request: HttpRequest | None = None
) -> HttpResponse:
    """A PDF download named after what it is (`briefing-arsenal-v-spurs.pdf`)."""
    pdf = render_pdf(template_name, context, request)
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{slugify(filename) or "document"}.pdf"'
    return response
