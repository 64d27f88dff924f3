"""Languages (docs/guides/languages.md): the gettext catalogs (Babel), the choice of a
request's locale, and the gettext functions the pages' and mails' templates call."""
