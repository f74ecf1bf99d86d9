// Harbor — the namespace of the guides' compiled snippets (GuideSnippetTests compares them with the guides).

/// Functions holding the Swift that Docs/*.md and the DocC catalogs show:
/// compiled with the tests, so a guide cannot show code that does not build.
enum GuideSnippetSources {}
