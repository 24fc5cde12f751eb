/*
 * Text from outside wattsim (a manifest's titles and commands, a table of
 * a received folder, a policy's error message, a file name) written into
 * HTML or Markdown as text, never as markup: no tag, entity, link, image
 * or raw HTML of the input survives, and its control characters are shown
 * as \xHH (ws_text_escape).
 */
#ifndef WATTSIM_MARKUP_H
#define WATTSIM_MARKUP_H

#include <stdio.h>

/* s as HTML text (also safe inside a double- or single-quoted attribute). */
void ws_html_text(FILE *f, const char *s);
/* s as Markdown inline text (a heading, a paragraph, a table cell, an
 * image's alt text): the characters that start markup in CommonMark and
 * GitHub's Markdown (\ ` * _ [ ] < > & | # ~ ! $) get a backslash. */
void ws_md_text(FILE *f, const char *s);
/* s as a Markdown code span: fenced by more backticks than it holds in a
 * row, so nothing in it ends the span; "–" when s is empty. */
void ws_md_code(FILE *f, const char *s);
/* A relative path as a Markdown link destination: bytes other than
 * A-Z a-z 0-9 . _ ~ - + / percent-encoded. */
void ws_md_url(FILE *f, const char *s);
/*
 * A Markdown text of tables and paragraphs (a sweep.md, paper.md) written
 * again, its cells and lines read as Markdown text (backslash escapes
 * undone) and written as text: as Markdown (html 0: tables stay tables,
 * alignment rows kept) or as HTML (html 1: <table> with a header row,
 * other lines <p>). Raw HTML, links and images in it come out as text.
 */
void ws_md_render(FILE *f, const char *md, int html);

#endif
