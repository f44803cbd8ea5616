package io.ferry.model;

import com.fasterxml.jackson.core.io.NumberInput;

import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.HashMap;
import java.util.Map;

/**
 * The fast path of {@link EventCodec}'s decoding, for what the coordinator reads most
 * (every rank's {@code ImageCaptured} and {@code ImageStaged}, every node's heartbeat): one
 * pass over the bytes straight into the record's constructor, where the general path
 * builds a JSON tree with Jackson, then binds it (about two thirds of the coordinator's CPU
 * per event at 32,768 ranks, measured with JFR; Jackson's streaming parser instead still
 * took 40%, a third of it creating the parser).
 *
 * <p>It takes only the plain case: a JSON object of plain scalar fields (strings of printable
 * ASCII without escapes, numbers, true, false) whose names are the
 * record's components (plus {@code type} and {@code v}), each given once with the token its
 * type expects (a whole number for {@code int}/{@code long}, in range; a number for
 * {@code double}; a string for {@link String}; true or false for {@code boolean}), of a
 * record whose components are all such scalars. Anything else (a missing, unknown or
 * repeated field, a null, a nested value, a number as a string, a constructor that refuses
 * the values) returns null and the general path decides, with its own error: so both paths
 * accept the same events and give the same records. Thread-safe.
 */
final class FlatRecords {
    private final Map<String, Flat> byType = new HashMap<>();

    /**
     * @param types      the wire's type names and their record classes (only flat records are kept)
     * @param addedLater per class, fields added later and the value an event without one gets
     */
    FlatRecords(Map<String, Class<?>> types, Map<Class<?>, Map<String, String>> addedLater) {
        for (Map.Entry<String, Class<?>> t : types.entrySet()) {
            Flat f = Flat.of(t.getValue(), addedLater.getOrDefault(t.getValue(), Map.of()));
            if (f != null) {
                byType.put(t.getKey(), f);
            }
        }
    }

    /** The record {@code bytes} encode if it is the plain case, of a type {@code base} allows; else null. */
    <T> T decode(byte[] bytes, Class<T> base, int version) {
        Object[] scratch = null;
        Flat f = null;
        // fields before "type" (how the encoder writes them): kept by name until the type is known
        Object[] early = null;
        int earlyCount = 0;
        boolean versionSeen = false;
        Scanner in = new Scanner(bytes);
        try {
            if (!in.take('{')) {
                return null;
            }
            boolean first = true;
            while (!in.take('}')) {
                if (!first && !in.take(',')) {
                    return null;
                }
                first = false;
                String name = in.string();
                if (name == null || !in.take(':')) {
                    return null;
                }
                Object value = in.scalar();
                if (value == null) {
                    return null;
                }
                if ("type".equals(name)) {
                    if (f != null || !(value instanceof String type)) {
                        return null;
                    }
                    f = byType.get(type);
                    if (f == null || !base.isAssignableFrom(f.type)) {
                        return null;
                    }
                    scratch = new Object[f.names.length];
                    for (int i = 0; i < earlyCount; i += 2) {
                        if (!f.set(scratch, (String) early[i], early[i + 1])) {
                            return null;
                        }
                    }
                } else if ("v".equals(name)) {
                    if (versionSeen || !(value instanceof Long v) || v != version) {
                        return null;
                    }
                    versionSeen = true;
                } else if (f != null) {
                    if (!f.set(scratch, name, value)) {
                        return null;
                    }
                } else {
                    if (early == null) {
                        early = new Object[32];
                    } else if (earlyCount == early.length) {
                        return null; // more fields than any flat record has
                    }
                    early[earlyCount++] = name;
                    early[earlyCount++] = value;
                }
            }
            if (!in.atEnd() || f == null || !versionSeen) {
                return null;
            }
            return base.cast(f.construct(scratch));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Reads JSON's plain tokens from UTF-8 bytes: strings of printable ASCII without escapes,
     * numbers, true and false. Anything else (an escape, a byte outside ASCII, null, a nested
     * value, a malformed number) gives null: the general path reads those.
     */
    private static final class Scanner {
        private final byte[] b;
        private int i;

        Scanner(byte[] b) {
            this.b = b;
        }

        private void skipSpace() {
            while (i < b.length && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) {
                i++;
            }
        }

        /** Consumes {@code c} (after white space) if it is next. */
        boolean take(char c) {
            skipSpace();
            if (i < b.length && b[i] == c) {
                i++;
                return true;
            }
            return false;
        }

        boolean atEnd() {
            skipSpace();
            return i == b.length;
        }

        String string() {
            if (!take('"')) {
                return null;
            }
            int start = i;
            while (i < b.length && b[i] != '"') {
                if (b[i] < 0x20 || b[i] == '\\') { // a control byte, an escape, or (negative) a byte outside ASCII
                    return null;
                }
                i++;
            }
            if (i == b.length) {
                return null;
            }
            return new String(b, start, i++ - start, StandardCharsets.ISO_8859_1);
        }

        /** A Long (a whole number in range), Double, String or Boolean; null for anything else. */
        Object scalar() {
            skipSpace();
            if (i == b.length) {
                return null;
            }
            byte c = b[i];
            if (c == '"') {
                return string();
            }
            if (c == 't' || c == 'f') {
                String word = c == 't' ? "true" : "false";
                if (b.length - i < word.length()
                        || !word.equals(new String(b, i, word.length(), StandardCharsets.ISO_8859_1))) {
                    return null;
                }
                i += word.length();
                return c == 't';
            }
            return number();
        }

        /** JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
        private Object number() {
            int start = i;
            if (i < b.length && b[i] == '-') {
                i++;
            }
            int intStart = i;
            if (i < b.length && b[i] == '0') {
                i++;
            } else {
                while (i < b.length && b[i] >= '0' && b[i] <= '9') {
                    i++;
                }
            }
            int intDigits = i - intStart;
            if (intDigits == 0) {
                return null;
            }
            boolean whole = true;
            if (i < b.length && b[i] == '.') {
                whole = false;
                i++;
                if (!digits()) {
                    return null;
                }
            }
            if (i < b.length && (b[i] == 'e' || b[i] == 'E')) {
                whole = false;
                i++;
                if (i < b.length && (b[i] == '+' || b[i] == '-')) {
                    i++;
                }
                if (!digits()) {
                    return null;
                }
            }
            if (i < b.length && b[i] >= '0' && b[i] <= '9') {
                return null; // a leading zero followed by digits
            }
            String text = new String(b, start, i - start, StandardCharsets.ISO_8859_1);
            if (whole) {
                return intDigits <= 18 ? (Object) Long.parseLong(text) : null; // longer: the general path
            }
            // Jackson's own fast parser, as the general path uses it: correctly rounded, the same double
            return NumberInput.parseDouble(text, true);
        }

        private boolean digits() {
            int from = i;
            while (i < b.length && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
            return i > from;
        }
    }

    /** A record whose components are all scalars: how to fill and build it. */
    private static final class Flat {
        final Class<?> type;
        final String[] names;
        final Class<?>[] kinds;
        final Map<String, Integer> index = new HashMap<>();
        final Object[] defaults;
        final Constructor<?> constructor;

        private Flat(Class<?> type, RecordComponent[] rc, Map<String, String> addedLater) throws NoSuchMethodException {
            this.type = type;
            this.names = new String[rc.length];
            this.kinds = new Class<?>[rc.length];
            this.defaults = new Object[rc.length];
            for (int i = 0; i < rc.length; i++) {
                names[i] = rc[i].getName();
                kinds[i] = rc[i].getType();
                index.put(names[i], i);
                defaults[i] = defaultOf(addedLater.get(names[i]), kinds[i]);
            }
            this.constructor = type.getDeclaredConstructor(kinds);
        }

        static Flat of(Class<?> c, Map<String, String> addedLater) {
            if (!c.isRecord()) {
                return null;
            }
            RecordComponent[] rc = c.getRecordComponents();
            for (RecordComponent r : rc) {
                Class<?> k = r.getType();
                if (k != String.class && k != int.class && k != long.class && k != double.class && k != boolean.class) {
                    return null;
                }
            }
            try {
                return new Flat(c, rc, addedLater);
            } catch (NoSuchMethodException e) {
                return null;
            }
        }

        /** The value an event without an added-later field gets, as the field's kind; null for none. */
        private static Object defaultOf(String text, Class<?> kind) {
            if (text == null) {
                return null;
            }
            if (kind == long.class) {
                return Long.parseLong(text);
            } else if (kind == int.class) {
                return Integer.parseInt(text);
            } else if (kind == double.class) {
                return Double.parseDouble(text);
            } else if (kind == boolean.class) {
                return Boolean.parseBoolean(text);
            }
            return text;
        }

        /** Sets field {@code name}; false if it is not a component, is given twice, or has the wrong kind of value. */
        boolean set(Object[] values, String name, Object value) {
            Integer i = index.get(name);
            if (i == null || values[i] != null) {
                return false;
            }
            Class<?> k = kinds[i];
            Object v;
            if (k == long.class) {
                v = value instanceof Long ? value : null;
            } else if (k == int.class) {
                v = value instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE
                        ? (Object) l.intValue() : null;
            } else if (k == double.class) {
                v = value instanceof Double ? value : value instanceof Long l ? (Object) l.doubleValue() : null;
            } else if (k == String.class) {
                v = value instanceof String ? value : null;
            } else {
                v = value instanceof Boolean ? value : null;
            }
            if (v == null) {
                return false;
            }
            values[i] = v;
            return true;
        }

        Object construct(Object[] values) {
            for (int i = 0; i < values.length; i++) {
                if (values[i] == null) {
                    if (defaults[i] == null) {
                        return null; // missing: the general path says so
                    }
                    values[i] = defaults[i];
                }
            }
            try {
                return constructor.newInstance(values);
            } catch (InvocationTargetException | InstantiationException | IllegalAccessException e) {
                return null; // refused (an unsafe job id, ...): the general path says why
            }
        }
    }
}
