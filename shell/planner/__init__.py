"""Turns a parsed query into a Plan: its sources, whether it ends, and which engine path runs it and why."""
