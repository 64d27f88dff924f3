// Passkey sign-in on the hosted login page: filled in later.
