"""Use cases of authsvc.

They depend on ``domain`` and on the ports in ``application.ports`` only.
"""
