/* html — see html.h. */
#include "report/html.h"

void
html_escape(buf *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
		switch (*p) {
			case '&':
				buf_puts(out, "&amp;");
				break;
			case '<':
				buf_puts(out, "&lt;");
				break;
			case '>':
				buf_puts(out, "&gt;");
				break;
			case '"':
				buf_puts(out, "&quot;");
				break;
			case '\'':
				buf_puts(out, "&#39;");
				break;
			default:
				if ((*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') || *p == 0x7f)
					buf_puts(out, "&#xFFFD;");
				else
					buf_putc(out, (char) *p);
		}
	}
}

void
html_column(int n, int width, int i, int *x, int *w)
{
	int left, right;

	if (n <= 0) {
		*x = 0;
		*w = width;
		return;
	}
	left = (int) ((int64_t) i * width / n);
	right = (int) ((int64_t) (i + 1) * width / n);
	*x = left;
	*w = right - left > 1 ? right - left - 1 : 1;
}

void
html_stack(const int64_t *counts, int k, int64_t max, int height, int *heights)
{
	int total = 0;

	for (int i = 0; i < k; i++) {
		heights[i] = 0;
		if (max <= 0 || counts[i] <= 0)
			continue;
		heights[i] = (int) (counts[i] * height / max);
		if (heights[i] < 2)
			heights[i] = 2;
		total += heights[i];
	}
	/* The minimum of 2 may overfill a column: take from the tallest marks. */
	while (total > height) {
		int big = 0;

		for (int i = 1; i < k; i++)
			if (heights[i] > heights[big])
				big = i;
		if (heights[big] <= 0)
			break;
		heights[big]--;
		total--;
	}
}
